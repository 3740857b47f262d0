package aisdk

import (
	"bufio"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentloop/agentloop/aisdk/internal/pipenet"
	"github.com/agentloop/agentloop/simtest"
	"github.com/google/go-cmp/cmp"
)

// The handler holds a flush that comes within flushWindow of the last one
// (issue 30's adaptive batching), but never the first event, an event
// after a pause, or the stream's end.
func TestHandler_HoldsAFlushAtMostTheWindowButNeitherTheFirstEventNorOneAfterAPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const gap = flushWindow / 4
		// The model pauses before its first delta, so that the response's
		// first event (its start) is flushed alone whatever the scheduling:
		// whether a delta ready at once joins it is up to the goroutines.
		const pause = 2 * flushWindow
		model := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{
			simtest.Delay(pause),
			simtest.Text("first "),
			simtest.Delay(gap),
			simtest.Text("second "),
			simtest.Delay(time.Minute),
			simtest.Text("third"),
		}})
		h := newHandler(model)
		h.KeepAlive = -1
		_, client := pipenet.Serve(t, h)
		start := time.Now()
		resp, err := client.Post("http://127.0.0.1/api/chat", "application/json", strings.NewReader(userBody("hi")))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got := map[string]time.Duration{"first event": time.Since(start)}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			for _, ev := range []string{`"delta":"first "`, `"delta":"second "`, `"delta":"third"`, "[DONE]"} {
				if strings.Contains(sc.Text(), ev) {
					got[ev] = time.Since(start)
				}
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		want := map[string]time.Duration{
			"first event":       0,                         // the first byte is not held
			`"delta":"first "`:  pause,                     // after a pause: at once
			`"delta":"second "`: pause + flushWindow,       // held to the window's end
			`"delta":"third"`:   pause + gap + time.Minute, // after a pause: at once
			"[DONE]":            pause + gap + time.Minute, // the end: at once
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("when each event reached the client (-want +got):\n%s", diff)
		}
	})
}
