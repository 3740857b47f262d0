package telemetry_test

import (
	"context"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop/telemetry"
)

func spanContext(i int) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{byte(i + 1)}})
}

func TestMemoryPauseStoreKeepsTheNewestKeys(t *testing.T) {
	ctx := context.Background()
	s := telemetry.NewMemoryPauseStore(2)
	for i := range 3 {
		if err := s.SavePause(ctx, fmt.Sprint("k", i), spanContext(i)); err != nil {
			t.Fatal(err)
		}
	}
	if sc, err := s.LoadPause(ctx, "k0"); err != nil || sc.IsValid() {
		t.Errorf("oldest key: %v, %v; want forgotten", sc, err)
	}
	for i := 1; i < 3; i++ {
		sc, err := s.LoadPause(ctx, fmt.Sprint("k", i))
		if err != nil || !sc.Equal(spanContext(i)) {
			t.Errorf("k%d: %v, %v; want %v", i, sc, err, spanContext(i))
		}
	}
	// Saving a key again replaces its span and does not count twice.
	_ = s.SavePause(ctx, "k2", spanContext(9))
	if sc, _ := s.LoadPause(ctx, "k1"); !sc.IsValid() {
		t.Error("k1 was forgotten when k2 was saved again")
	}
	if sc, _ := s.LoadPause(ctx, "k2"); !sc.Equal(spanContext(9)) {
		t.Errorf("k2 = %v, want the newer span", sc)
	}
	// A load keeps the key, so a retried resume links again.
	if sc, _ := s.LoadPause(ctx, "k2"); !sc.IsValid() {
		t.Error("k2 was forgotten after a load")
	}
}

func TestMemoryPauseStoreHasADefaultCapacity(t *testing.T) {
	ctx := context.Background()
	s := telemetry.NewMemoryPauseStore(0)
	for i := range telemetry.DefaultPauseCapacity + 1 {
		_ = s.SavePause(ctx, fmt.Sprint(i), spanContext(0))
	}
	if sc, _ := s.LoadPause(ctx, "0"); sc.IsValid() {
		t.Error("the store kept more than DefaultPauseCapacity keys")
	}
	if sc, _ := s.LoadPause(ctx, "1"); !sc.IsValid() {
		t.Error("the store kept fewer than DefaultPauseCapacity keys")
	}
}
