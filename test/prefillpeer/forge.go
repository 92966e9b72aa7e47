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

package prefillpeer

import (
	"errors"
	"net"
	"strings"
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/zmqsock"
)

// forgeLinger is how long SendFrames waits for its message to leave.
const forgeLinger = 2 * time.Second

// SendFrames sends one multipart message, whatever its frames, to a decode
// rank's status endpoint (tcp://host:port) from a fresh PUSH socket, and
// returns once it has been handed to the connection or forgeLinger has
// passed. Anyone can reach a status socket; this is how fault tests forge
// statuses from unknown ranks or send malformed ones.
func SendFrames(endpoint string, frames [][]byte) error {
	return SendFramesFrom("", endpoint, frames)
}

// SendFramesFrom is SendFrames from a given source IP (another loopback
// address such as 127.0.0.2 plays another host); "" lets the system choose.
func SendFramesFrom(sourceIP, endpoint string, frames [][]byte) error {
	if len(frames) == 0 {
		return errors.New("prefillpeer: a ZMQ message has at least one frame")
	}
	if sourceIP != "" { // libzmq's tcp://SOURCE:PORT;DESTINATION:PORT
		endpoint = "tcp://" + net.JoinHostPort(sourceIP, "0") + ";" + strings.TrimPrefix(endpoint, "tcp://")
	}
	sock, err := zmqsock.ConnectPush(nil, endpoint, zmqsock.Linger(forgeLinger), zmqsock.SendTimeout(forgeLinger))
	if err != nil {
		return err
	}
	_, err = sock.SendMessage(frames)
	// Close blocks until the message is out or the linger expires.
	return errors.Join(err, sock.Close())
}

// SendStatus sends a well-formed status message to a decode status endpoint,
// as any prefill rank (or impostor) could.
func SendStatus(endpoint string, s kvwire.Status) error {
	return SendFrames(endpoint, s.Frames())
}

// SendStatusFrom is SendStatus from sourceIP.
func SendStatusFrom(sourceIP, endpoint string, s kvwire.Status) error {
	return SendFramesFrom(sourceIP, endpoint, s.Frames())
}
