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

package localcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// settle is how long the live table waits for a burst of changes (a status
// write touches three conditions and the summary) before redrawing.
const settle = 150 * time.Millisecond

// LiveTable keeps a table of every PDPair on Out current: it lists, watches,
// and redraws after changes until ctx ends. On a terminal it redraws in place
// under Header; elsewhere (a pipe, a log) it appends a timestamped table each
// time the table's text changes.
type LiveTable struct {
	Client client.WithWatch
	Out    io.Writer
	Header string
	// InPlace redraws over the previous table (defaults to Out being a terminal).
	InPlace bool
	// Extra, when set, is drawn under the table and polled every second
	// (e.g. the demo's rooms/s, which no watch event announces).
	Extra func() string

	last  string
	pairs map[string]pdv1.PDPair
}

// NewLiveTable returns a live table that redraws in place when out is a terminal.
func NewLiveTable(c client.WithWatch, out io.Writer, header string) *LiveTable {
	return &LiveTable{Client: c, Out: out, Header: header, InPlace: isTerminal(out)}
}

// Run draws until ctx ends; API errors are shown and retried, not returned.
func (t *LiveTable) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := t.listAndWatch(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintf(t.Out, "pdpairs: %v (retrying)\n", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// listAndWatch draws the current list, then redraws on watch events until
// the watch ends (the API server closes watches every few minutes).
func (t *LiveTable) listAndWatch(ctx context.Context) error {
	var list pdv1.PDPairList
	if err := t.Client.List(ctx, &list); err != nil {
		return err
	}
	t.pairs = make(map[string]pdv1.PDPair, len(list.Items))
	for _, p := range list.Items {
		t.pairs[p.Namespace+"/"+p.Name] = p
	}
	t.draw()
	w, err := t.Client.Watch(ctx, &pdv1.PDPairList{},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		return err
	}
	defer w.Stop()
	redraw := time.NewTimer(time.Hour)
	redraw.Stop()
	var poll <-chan time.Time
	if t.Extra != nil {
		every := time.NewTicker(pollExtra(t.InPlace))
		defer every.Stop()
		poll = every.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-poll:
			t.draw()
		case <-redraw.C:
			t.draw()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil // closed by the server: list again
			}
			if !t.apply(ev) {
				return nil // an error event (e.g. resource version too old): list again
			}
			redraw.Reset(settle)
		}
	}
}

// apply records one watch event; false means the watch must be restarted.
func (t *LiveTable) apply(ev watch.Event) bool {
	p, ok := ev.Object.(*pdv1.PDPair)
	if !ok {
		return false
	}
	key := p.Namespace + "/" + p.Name
	switch ev.Type {
	case watch.Added, watch.Modified:
		t.pairs[key] = *p
	case watch.Deleted:
		delete(t.pairs, key)
	case watch.Error:
		return false
	}
	return true
}

func (t *LiveTable) draw() {
	pairs := make([]pdv1.PDPair, 0, len(t.pairs))
	for _, p := range t.pairs {
		pairs = append(pairs, p)
	}
	var b bytes.Buffer
	_ = WriteTable(&b, pairs)
	if t.Extra != nil {
		b.WriteString(t.Extra())
	}
	if b.String() == t.last {
		return
	}
	t.last = b.String()
	stamp := time.Now().Format("15:04:05")
	if t.InPlace {
		// Home the cursor and clear the screen, then draw header and table.
		fmt.Fprintf(t.Out, "\x1b[H\x1b[2J%s\nPDPairs at %s:\n%s", t.Header, stamp, t.last)
		return
	}
	fmt.Fprintf(t.Out, "\n--- PDPairs at %s ---\n%s", stamp, t.last)
}

// pollExtra redraws a terminal every second; a log gets a new table at
// most every 5s, so that it stays readable.
func pollExtra(inPlace bool) time.Duration {
	if inPlace {
		return time.Second
	}
	return 5 * time.Second
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
