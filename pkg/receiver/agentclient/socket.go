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

package agentclient

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/pdtopo/pdtopo/api/v1alpha1"
)

// SocketDirEnv names the environment variable through which decode pods
// tell engine containers where the agent's sockets are (the shared
// emptyDir, /run/pdtopo in injected pods).
const SocketDirEnv = v1alpha1.AgentSocketDirEnv

// DefaultSocketDir is where injected pods mount the agent's sockets.
const DefaultSocketDir = v1alpha1.AgentSocketDir

// SocketPath is engine rank R's socket in dir: <dir>/rank-<R>.sock (R in
// decimal, no padding). An empty dir means $PDTOPO_AGENT_SOCKET_DIR, or
// DefaultSocketDir when that is unset.
func SocketPath(dir string, engineRank int) string {
	if dir == "" {
		dir = os.Getenv(SocketDirEnv)
	}
	if dir == "" {
		dir = DefaultSocketDir
	}
	return filepath.Join(dir, "rank-"+strconv.Itoa(engineRank)+".sock")
}
