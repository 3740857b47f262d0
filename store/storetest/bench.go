package storetest

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// Benchmark measures a backend:
//
//   - PutChat: one chat write (a get, one message appended, a put) of a
//     chat of 20 messages of about 2 KB;
//   - AppendChunk: one chunk of 100 bytes appended to a stream log;
//   - ConcurrentChats: 16 chats per GOMAXPROCS, each written by its own
//     goroutine as in PutChat (the chat keeps its last 20 messages, so
//     every write costs the same), all at once; it reports messages/s;
//   - ReadStream: following a finished log of 1000 chunks, per chunk.
func Benchmark(b *testing.B, newStore NewStore) {
	ctx := b.Context()
	b.Run("PutChat", func(b *testing.B) {
		s := newStore(b, nil)
		c := &store.Chat{ID: "bench", History: largeHistory(7)[:20]}
		if err := s.PutChat(ctx, c); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			got, err := s.GetChat(ctx, "bench")
			if err != nil {
				b.Fatal(err)
			}
			got.History = append(got.History[:20], agentloop.UserMessage("one more"))
			if err := s.PutChat(ctx, got); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendChunk", func(b *testing.B) {
		s := newStore(b, nil)
		if err := s.PutChat(ctx, &store.Chat{ID: "bench"}); err != nil {
			b.Fatal(err)
		}
		l, err := s.StartStream(ctx, "bench", time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		chunk := []byte(`data: {"type":"text-delta","id":"t1","delta":"some words of the answer"}` + "\n\n")
		chunk = append(chunk, make([]byte, 100-len(chunk))...)
		for b.Loop() {
			if _, err := s.AppendChunks(ctx, l, chunk); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ConcurrentChats", func(b *testing.B) {
		s := newStore(b, nil)
		history := largeHistory(7)[:20]
		var chats atomic.Int64
		b.SetParallelism(16)
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			id := fmt.Sprintf("chat-%d", chats.Add(1))
			if err := s.PutChat(ctx, &store.Chat{ID: id}); err != nil {
				b.Error(err)
				return
			}
			for pb.Next() {
				c, err := s.GetChat(ctx, id)
				if err == nil {
					c.History = append(c.History, history[len(c.History)%len(history)])
					c.History = c.History[max(0, len(c.History)-20):]
					err = s.PutChat(ctx, c)
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
		b.ReportMetric(float64(chats.Load()), "chats")
	})
	b.Run("ReadStream", func(b *testing.B) {
		s := newStore(b, nil)
		if err := s.PutChat(ctx, &store.Chat{ID: "bench"}); err != nil {
			b.Fatal(err)
		}
		l, err := s.StartStream(ctx, "bench", time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		const n = 1000
		for i := range n {
			if _, err := s.AppendChunks(ctx, l, fmt.Appendf(nil, "data: chunk %d\n\n", i)); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.EndStream(ctx, l, store.StreamDone); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			got := 0
			for _, err := range s.ReadStream(ctx, l.StreamID, 0) {
				if err != nil {
					b.Fatal(err)
				}
				got++
			}
			if got != n {
				b.Fatalf("read %d chunks, want %d", got, n)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/chunk")
	})
}
