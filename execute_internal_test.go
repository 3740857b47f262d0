package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A call that timed out holds its ToolConcurrency slot until its func
// really returns (white-box: the black-box test cannot order the racing
// start of the next call).
func TestRunTool_TimedOutFuncKeepsItsSlotUntilItReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unblock := make(chan struct{})
		tool, err := NewRawTool("stuck", "", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
			<-unblock // ignores ctx
			return "late", nil
		})
		if err != nil {
			t.Fatal(err)
		}
		tool.Timeout = time.Minute
		r := &run{agent: &Agent{}, slots: make(chan struct{}, 1), progress: make(chan progress)}
		r.ctx, r.cancel = context.WithCancelCause(t.Context())
		r.done = r.ctx.Done()
		defer r.cancel(nil)

		r.slots <- struct{}{} // the job's slot, as dispatch takes it
		j := &job{call: ToolCall{ID: "c1", Name: "stuck"}, tool: tool}
		res := r.runTool(j, j.call)
		if !j.handedOff || !errors.Is(res.Err, ErrToolTimeout) {
			t.Fatalf("runTool = %+v, handed off %v; want a timeout result of a func that runs on", res, j.handedOff)
		}
		if len(r.slots) != 1 {
			t.Fatal("the slot was freed while the timed-out func still runs")
		}
		close(unblock)
		r.wg.Wait()
		if len(r.slots) != 0 {
			t.Fatal("the slot was not freed when the func returned")
		}
	})
}
