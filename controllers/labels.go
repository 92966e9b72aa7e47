package controllers

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

const (
	// LabelPDPair names the PDPair a plan ConfigMap belongs to.
	LabelPDPair = "pd.pdtopo.dev/pdpair"
	// LabelRole says whether a plan ConfigMap is the index or a shard.
	LabelRole = "pd.pdtopo.dev/role"
	// AnnotationPlanHash is the hash of the plan set a ConfigMap belongs to
	// (the PDPair's status.plan.hash).
	AnnotationPlanHash = "pd.pdtopo.dev/plan-hash"
	// AnnotationContentHash is the hash of the ConfigMap's data as the
	// operator wrote it; an update that leaves data and this hash consistent
	// is the operator's own and is not reconciled again.
	AnnotationContentHash = "pd.pdtopo.dev/content-hash"

	roleIndex = "index"
	roleShard = "shard"

	labelManagedBy = "app.kubernetes.io/managed-by"
	managerName    = "pdtopo"
)

// PlanConfigMapSelector selects every plan ConfigMap; the manager caches
// only these, not every ConfigMap in the cluster.
func PlanConfigMapSelector() labels.Selector {
	req, err := labels.NewRequirement(LabelPDPair, selection.Exists, nil)
	if err != nil { // a constant, valid key: cannot happen
		panic(err)
	}
	return labels.NewSelector().Add(*req)
}
