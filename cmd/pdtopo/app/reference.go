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

package app

import (
	"io"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/printflags"
	"github.com/pdtopo/pdtopo/internal/clidocs"
)

// referenceIntro opens docs/cli-reference.md.
const referenceIntro = "`pdtopo` offline, `kubectl pdtopo` when installed as `kubectl-pdtopo` on your `PATH` " +
	"([the kubectl plugin](kubectl-plugin.md): what each verb reads, the pictures, " +
	"[every exit status](kubectl-plugin.md#exit-status)). Every verb takes the flags of " +
	"[Flags of every verb](#flags-of-every-verb) too, and `-h`; `pdtopo --version` prints the version."

// WriteReference writes the command line reference page, docs/cli-reference.md
// (hack/cli-docs, `make cli-docs`), from the command tree itself.
func WriteReference(w io.Writer) error {
	root := NewRootCommand(genericclioptions.IOStreams{})
	root.Annotations = nil // pdtopo, however the generator was started
	return clidocs.Write(w, root, clidocs.Options{
		FormatsAnnotation: printflags.FormatsAnnotation, DefaultAnnotation: printflags.DefaultAnnotation, Intro: referenceIntro,
	})
}
