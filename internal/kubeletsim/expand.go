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

package kubeletsim

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// PodFacts are what the kubelet knows about a running pod and resolves
// downward-API variables from.
type PodFacts struct {
	PodIP string
}

// ContainerEnv resolves a container's environment as the kubelet does for
// the variables it supports here: literal values (themselves expanded
// against earlier variables) and the downward API fields metadata.name,
// metadata.namespace and status.podIP. Anything else is an error, so a test
// never runs with a variable silently missing.
func ContainerEnv(pod *corev1.Pod, c *corev1.Container, facts PodFacts) (map[string]string, []string, error) {
	env := map[string]string{}
	var list []string
	for _, e := range c.Env {
		var v string
		switch {
		case e.ValueFrom == nil:
			v = Expand(e.Value, env)
		case e.ValueFrom.FieldRef != nil:
			switch e.ValueFrom.FieldRef.FieldPath {
			case "metadata.name":
				v = pod.Name
			case "metadata.namespace":
				v = pod.Namespace
			case "status.podIP":
				v = facts.PodIP
			default:
				return nil, nil, fmt.Errorf("env %s: field %s is not resolved here", e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
		default:
			return nil, nil, fmt.Errorf("env %s: only values and field references are resolved here", e.Name)
		}
		env[e.Name] = v
		list = append(list, e.Name+"="+v)
	}
	return env, list, nil
}

// Expand replaces $(NAME) with NAME's value as the kubelet does in command,
// args and env values: "$$" is a literal "$", and a reference to an
// undefined name stays as written.
func Expand(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteByte(s[i])
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := env[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// CommandLine is a container's command and args with $(VAR) expanded.
func CommandLine(c *corev1.Container, env map[string]string) []string {
	var out []string
	for _, s := range append(append([]string{}, c.Command...), c.Args...) {
		out = append(out, Expand(s, env))
	}
	return out
}

// ProbeBase is where the kubelet sends a container's HTTP probes on the
// named port: http://POD_IP:PORT (IPv6 pod IPs bracketed).
func ProbeBase(c *corev1.Container, facts PodFacts, portName string) (string, error) {
	for _, p := range c.Ports {
		if p.Name == portName {
			return "http://" + net.JoinHostPort(facts.PodIP, strconv.Itoa(int(p.ContainerPort))), nil
		}
	}
	return "", fmt.Errorf("container %s has no port named %s", c.Name, portName)
}
