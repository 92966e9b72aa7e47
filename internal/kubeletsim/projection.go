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
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// dataDirName is the kubelet's symlink to the current timestamped directory.
const dataDirName = "..data"

// MaterialiseVolume writes a pod's ConfigMap, Secret or projected volume
// into dir the way the kubelet does on every sync: it resolves each source
// from the API (an optional object that does not exist contributes
// nothing; with items, only the keys listed, under their paths, an absent
// key skipped when the source is optional), collects the payload where a
// key of a later source replaces the same key of an earlier one, as the
// kubelet's map does, then swaps the whole payload in atomically (see
// WriteAtomic). Call it again after the objects change to get what a
// running pod would see next.
func MaterialiseVolume(ctx context.Context, c client.Reader, pod *corev1.Pod, volumeName, dir string) error {
	payload, _, err := VolumePayload(ctx, c, pod, volumeName)
	if err != nil {
		return err
	}
	return WriteAtomic(dir, payload)
}

// Collision is a file two sources of a projected volume both write; the
// later source's content is the one in the volume.
type Collision struct {
	Path           string
	Earlier, Later string
}

// VolumePayload is what MaterialiseVolume writes, with the collisions
// between sources that the kubelet resolves silently.
func VolumePayload(ctx context.Context, c client.Reader, pod *corev1.Pod, volumeName string) (map[string][]byte, []Collision, error) {
	var vol *corev1.Volume
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == volumeName {
			vol = &pod.Spec.Volumes[i]
		}
	}
	var sources []corev1.VolumeProjection
	switch {
	case vol == nil:
		return nil, nil, fmt.Errorf("pod %s has no volume %q", pod.Name, volumeName)
	case vol.Projected != nil:
		sources = vol.Projected.Sources
	case vol.ConfigMap != nil:
		sources = []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{
			LocalObjectReference: vol.ConfigMap.LocalObjectReference, Items: vol.ConfigMap.Items, Optional: vol.ConfigMap.Optional}}}
	case vol.Secret != nil:
		sources = []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: vol.Secret.SecretName}, Items: vol.Secret.Items, Optional: vol.Secret.Optional}}}
	default:
		return nil, nil, fmt.Errorf("volume %q: only ConfigMap, Secret and projected volumes are materialised", volumeName)
	}
	payload := map[string][]byte{}
	from := map[string]string{}
	var collisions []Collision
	for _, src := range sources {
		name, data, err := sourceData(ctx, c, pod.Namespace, src)
		if err != nil {
			return nil, nil, fmt.Errorf("volume %q: %w", volumeName, err)
		}
		for path, value := range data {
			if earlier, dup := from[path]; dup {
				collisions = append(collisions, Collision{Path: path, Earlier: earlier, Later: name})
			}
			payload[path], from[path] = value, name
		}
	}
	return payload, collisions, nil
}

// sourceData resolves one source to its files (path → content).
func sourceData(ctx context.Context, c client.Reader, namespace string, src corev1.VolumeProjection) (string, map[string][]byte, error) {
	var (
		obj      client.Object
		name     string
		items    []corev1.KeyToPath
		optional *bool
		data     func() map[string][]byte
	)
	switch {
	case src.ConfigMap != nil:
		cm := &corev1.ConfigMap{}
		obj, name, items, optional = cm, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional
		data = func() map[string][]byte {
			out := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
			for k, v := range cm.Data {
				out[k] = []byte(v)
			}
			for k, v := range cm.BinaryData {
				out[k] = v
			}
			return out
		}
	case src.Secret != nil:
		secret := &corev1.Secret{}
		obj, name, items, optional = secret, src.Secret.Name, src.Secret.Items, src.Secret.Optional
		data = func() map[string][]byte { return secret.Data }
	default:
		return "", nil, errors.New("only ConfigMap and Secret sources are materialised")
	}
	isOptional := optional != nil && *optional
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj)
	if apierrors.IsNotFound(err) && isOptional {
		return name, nil, nil
	}
	if err != nil {
		return name, nil, fmt.Errorf("%s: %w", name, err)
	}
	all := data()
	if len(items) == 0 {
		return name, all, nil
	}
	out := make(map[string][]byte, len(items))
	for _, it := range items {
		v, ok := all[it.Key]
		if !ok {
			if isOptional {
				continue
			}
			return name, nil, fmt.Errorf("%s has no key %q, which the volume lists", name, it.Key)
		}
		out[it.Path] = v
	}
	return name, out, nil
}

// WriteAtomic is the kubelet's atomic writer: the payload goes into a new
// hidden timestamped directory, the "..data" symlink is swapped to it with
// one rename, every visible file is a symlink through "..data", visible
// names no longer in the payload are removed, and the old directory is
// deleted. A reader that resolves "..data" once sees one whole generation.
func WriteAtomic(dir string, payload map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	oldTS, _ := os.Readlink(filepath.Join(dir, dataDirName))
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	tsName := ".." + time.Now().UTC().Format("2006_01_02_15_04_05.000000000") + "." + hex.EncodeToString(suffix[:])
	tsDir := filepath.Join(dir, tsName)
	if err := os.Mkdir(tsDir, 0o755); err != nil {
		return err
	}
	for key, value := range payload {
		if strings.ContainsRune(key, '/') || strings.HasPrefix(key, "..") {
			return fmt.Errorf("key %q is not a plain file name", key)
		}
		if err := os.WriteFile(filepath.Join(tsDir, key), value, 0o444); err != nil {
			return err
		}
	}
	tmpLink := filepath.Join(dir, dataDirName+"_tmp")
	_ = os.Remove(tmpLink)
	if err := os.Symlink(tsName, tmpLink); err != nil {
		return err
	}
	if err := os.Rename(tmpLink, filepath.Join(dir, dataDirName)); err != nil {
		return err
	}
	for key := range payload {
		link := filepath.Join(dir, key)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join(dataDirName, key), link); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		if _, keep := payload[e.Name()]; !keep {
			errs = append(errs, os.Remove(filepath.Join(dir, e.Name())))
		}
	}
	if oldTS != "" && oldTS != tsName {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, oldTS)))
	}
	return errors.Join(errs...)
}

// VisibleFiles lists the names a container sees in a materialised volume.
func VisibleFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "..") {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
