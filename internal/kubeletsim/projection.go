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

// MaterialiseVolume writes a pod's projected ConfigMap volume into dir the
// way the kubelet does on every sync: it resolves each source from the API
// (an optional ConfigMap that does not exist contributes nothing), then
// swaps the whole payload in atomically (see WriteAtomic). Call it again
// after the ConfigMaps change to get what a running pod would see next.
func MaterialiseVolume(ctx context.Context, c client.Reader, pod *corev1.Pod, volumeName, dir string) error {
	var vol *corev1.Volume
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == volumeName {
			vol = &pod.Spec.Volumes[i]
		}
	}
	if vol == nil || vol.Projected == nil {
		return fmt.Errorf("pod %s has no projected volume %q", pod.Name, volumeName)
	}
	payload := map[string][]byte{}
	for _, src := range vol.Projected.Sources {
		if src.ConfigMap == nil {
			return fmt.Errorf("volume %q: only ConfigMap sources are materialised", volumeName)
		}
		var cm corev1.ConfigMap
		err := c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: src.ConfigMap.Name}, &cm)
		if apierrors.IsNotFound(err) && src.ConfigMap.Optional != nil && *src.ConfigMap.Optional {
			continue
		}
		if err != nil {
			return fmt.Errorf("volume %q: ConfigMap %s: %w", volumeName, src.ConfigMap.Name, err)
		}
		if len(src.ConfigMap.Items) > 0 {
			return fmt.Errorf("volume %q: ConfigMap %s: items are not materialised", volumeName, src.ConfigMap.Name)
		}
		for k, v := range cm.Data {
			if err := addKey(payload, cm.Name, k, []byte(v)); err != nil {
				return err
			}
		}
		for k, v := range cm.BinaryData {
			if err := addKey(payload, cm.Name, k, v); err != nil {
				return err
			}
		}
	}
	return WriteAtomic(dir, payload)
}

// addKey refuses a key two sources share: the kubelet would let the later
// source win silently, which for plans would be a bug worth failing on.
func addKey(payload map[string][]byte, cm, key string, value []byte) error {
	if _, dup := payload[key]; dup {
		return fmt.Errorf("key %q of ConfigMap %s is also in another source of the volume", key, cm)
	}
	payload[key] = value
	return nil
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
