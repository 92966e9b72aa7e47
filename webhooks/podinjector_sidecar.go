/*
Copyright 2026 The pdtopo Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package webhooks

import (
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// AgentSidecar is what the manager's flags decide about the injected agent.
type AgentSidecar struct {
	// Image is the receiver-agent image (the manager's --agent-image).
	Image string
	// ImagePullPolicy defaults to IfNotPresent.
	ImagePullPolicy corev1.PullPolicy
	// Resources default to DefaultAgentResources.
	Resources *corev1.ResourceRequirements
	// ImagePullSecrets name Secrets, in the pod's namespace, for pulling
	// Image: they are added to the pod's imagePullSecrets (those it does not
	// list already), which the kubelet uses for every container of the pod.
	ImagePullSecrets []string
	// PlanPublicKeys are the base64 ed25519 public keys of the operator's
	// plan signing key (and any it still accepts during a rotation): the
	// agent loads only an index signed with one of them for its pair. Empty
	// injects an agent that loads unsigned plans.
	PlanPublicKeys []string
	// planMinGeneration is the pair's generation when the pod is admitted
	// (signedFor): no plans of an older one are loaded.
	planMinGeneration int64
	// decodeLayout is the pair's decode layout when the pod is admitted
	// (admittedUnder); zero writes no layout.
	decodeLayout transferplan.Parallelism
}

// AgentBinary is the agent's path in its image (see the Dockerfile).
const AgentBinary = "/receiver-agent"

// DefaultAgentResources: the agent moves only small control messages (the
// KV bytes go engine to engine), so it needs little CPU; memory holds the
// plans of its ranks and the open rooms.
func DefaultAgentResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("50m"),
			corev1.ResourceMemory: resource.MustParse("64Mi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceMemory: resource.MustParse("512Mi"),
		},
	}
}

// AgentUID is the agent image's non-root user (the Dockerfile's USER); set
// explicitly so that runAsNonRoot can be verified whatever the image
// metadata says.
const AgentUID = 65532

// injectAgent adds the agent to a pod that does not have it yet: the plans
// volume, the sockets volume, the native sidecar, and the socket mount and
// variable in every other container. It refuses rather than overwrites when
// the pod already uses one of the names.
func injectAgent(pod *corev1.Pod, pair string, ranks rankRange, agent AgentSidecar) *refusal {
	if r := checkNames(pod); r != nil {
		return r
	}
	curve, r := curveSecret(pod)
	if r != nil {
		return r
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, plansVolume(pair), socketsVolume())
	addPullSecrets(pod, agent.ImagePullSecrets)
	for i := range pod.Spec.InitContainers {
		shareSockets(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		shareSockets(&pod.Spec.Containers[i])
	}
	// First among the init containers: a native sidecar starts before the
	// init containers after it, so even those can reach the agent.
	sidecar := agentContainer(ranks, agent)
	sidecar.Args = append(sidecar.Args, signedPlanArgs(pair, agent)...)
	if curve != "" {
		addCurve(pod, &sidecar, curve)
	}
	pod.Spec.InitContainers = append([]corev1.Container{sidecar}, pod.Spec.InitContainers...)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[pdv1.AnnotationInjected] = fmt.Sprintf("first=%d,count=%d", ranks.first, ranks.count)
	recordDecodeLayout(pod, &pod.Spec.InitContainers[0], agent.decodeLayout)
	return nil
}

func checkNames(pod *corev1.Pod) *refusal {
	for _, v := range pod.Spec.Volumes {
		switch v.Name {
		case pdv1.AgentPlansVolume, pdv1.AgentSealVolume, pdv1.AgentSocketsVolume, pdv1.AgentCurveVolume:
			return refuse(RefuseNameConflict, "the pod already has a volume named %q, which the agent's injection uses", v.Name)
		}
	}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		for _, m := range c.VolumeMounts {
			if m.MountPath == pdv1.AgentSocketDir {
				return refuse(RefuseNameConflict, "container %q already mounts %s, where the agent's sockets go", c.Name, m.MountPath)
			}
		}
	}
	return nil
}

// plansVolume projects the index and every shard name the pair could ever
// have into one directory, each optional. The kubelet resolves the sources
// on every sync, so shards that appear or disappear after a spec change show
// up in the running pod without a restart; planstore's keys are unique
// across the pair's ConfigMaps, so the operator's objects never collide.
//
// Anyone who can create ConfigMaps can create one under a shard name the
// pair does not use, with keys of its own; where two sources hold a key,
// the kubelet keeps the later source's. So the sources are ordered for the
// operator's objects to win: shards from the last name to the first (the
// operator uses the first names), then the index, projecting only its
// index.json, the sets index and their signatures. A foreign object can
// then add files nobody reads, but not replace the operator's while they
// exist; the signatures (index.sig, plansets.sig, projected beside what
// they sign) refuse whatever else is there.
func plansVolume(pair string) corev1.Volume {
	sources := make([]corev1.VolumeProjection, 0, 1+planstore.MaxShardConfigMaps)
	add := func(name string, items []corev1.KeyToPath) {
		sources = append(sources, corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: name},
			Items:                items,
			Optional:             ptr.To(true),
		}})
	}
	for i := planstore.MaxShardConfigMaps - 1; i >= 0; i-- {
		add(planstore.ShardConfigMapName(pair, i), nil)
	}
	// the sets index and its signature are absent while one set is
	// published; an optional source skips the items it does not hold
	indexItems := []corev1.KeyToPath{{Key: planstore.IndexKey, Path: planstore.IndexKey}, {Key: planstore.SignatureKey, Path: planstore.SignatureKey},
		{Key: planstore.SetsKey, Path: planstore.SetsKey}, {Key: planstore.SetsSignatureKey, Path: planstore.SetsSignatureKey}}
	add(planstore.IndexConfigMapName(pair), indexItems)
	return corev1.Volume{Name: pdv1.AgentPlansVolume, VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{Sources: sources, DefaultMode: ptr.To[int32](0o444)},
	}}
}

// addPullSecrets adds the agent image's pull secrets the pod does not list
// yet, after its own.
func addPullSecrets(pod *corev1.Pod, names []string) {
	for _, name := range names {
		if !slices.ContainsFunc(pod.Spec.ImagePullSecrets, func(r corev1.LocalObjectReference) bool { return r.Name == name }) {
			pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: name})
		}
	}
}

// socketsVolume holds only unix sockets, so a tiny size limit suffices.
func socketsVolume() corev1.Volume {
	return corev1.Volume{Name: pdv1.AgentSocketsVolume, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Mi"))},
	}}
}

// shareSockets mounts the sockets directory into an engine container and
// tells it where it is.
func shareSockets(c *corev1.Container) {
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: pdv1.AgentSocketsVolume, MountPath: pdv1.AgentSocketDir})
	for i := range c.Env {
		if c.Env[i].Name == pdv1.AgentSocketDirEnv {
			c.Env[i] = corev1.EnvVar{Name: pdv1.AgentSocketDirEnv, Value: pdv1.AgentSocketDir}
			return
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: pdv1.AgentSocketDirEnv, Value: pdv1.AgentSocketDir})
}

// AgentArgs is the agent's command line for a rank range, in the form the
// agent contract gives; $(POD_IP) is expanded by the kubelet.
func AgentArgs(firstRank, rankCount int64) []string {
	return []string{
		"--first-rank=" + strconv.FormatInt(firstRank, 10),
		"--rank-count=" + strconv.FormatInt(rankCount, 10),
		"--socket-dir=" + pdv1.AgentSocketDir,
		"--status-host=$(POD_IP)",
		// The status host, so that an IPv6 pod IP needs no brackets.
		"--probe-port=" + strconv.Itoa(pdv1.AgentProbePort),
		"--plan-dir=" + pdv1.AgentPlanDir,
	}
}

func agentContainer(ranks rankRange, agent AgentSidecar) corev1.Container {
	resources := DefaultAgentResources()
	if agent.Resources != nil {
		resources = *agent.Resources
	}
	pull := agent.ImagePullPolicy
	if pull == "" {
		pull = corev1.PullIfNotPresent
	}
	probe := func(path string, period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: path, Port: intstr.FromString(pdv1.AgentProbePortName),
			}},
			PeriodSeconds: period, TimeoutSeconds: 2, FailureThreshold: 3,
		}
	}
	liveness := probe("/healthz", 10)
	liveness.InitialDelaySeconds = 5
	return corev1.Container{
		Name:            pdv1.AgentContainerName,
		Image:           agent.Image,
		ImagePullPolicy: pull,
		Command:         []string{AgentBinary},
		Args:            AgentArgs(ranks.first, ranks.count),
		Env: []corev1.EnvVar{
			fieldEnv("POD_IP", "status.podIP"),
			fieldEnv("POD_NAME", "metadata.name"),
			fieldEnv("POD_NAMESPACE", "metadata.namespace"),
		},
		Ports: []corev1.ContainerPort{{
			Name: pdv1.AgentProbePortName, ContainerPort: pdv1.AgentProbePort, Protocol: corev1.ProtocolTCP,
		}},
		// Ready once the agent holds a plan for every rank it serves.
		ReadinessProbe: probe("/readyz", 5),
		LivenessProbe:  liveness,
		Resources:      resources,
		VolumeMounts: []corev1.VolumeMount{
			{Name: pdv1.AgentPlansVolume, MountPath: pdv1.AgentPlanDir, ReadOnly: true},
			{Name: pdv1.AgentSocketsVolume, MountPath: pdv1.AgentSocketDir},
		},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			RunAsUser:                ptr.To[int64](AgentUID),
			RunAsGroup:               ptr.To[int64](AgentUID),
			ReadOnlyRootFilesystem:   ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			Privileged:               ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		// A native sidecar: runs for the pod's whole life, started before and
		// stopped after the engine containers.
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
	}
}

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path},
	}}
}
