// Package v1alpha1 contains the PDPair API of pdtopo.
//
// +kubebuilder:object:generate=true
// +groupName=pd.pdtopo.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the PDPair API.
	GroupVersion = schema.GroupVersion{Group: "pd.pdtopo.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the API's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &PDPair{}, &PDPairList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
