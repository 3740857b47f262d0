package pgstore_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/pgstore"
)

// Two replicas share one database: a run on one streams to a client that
// resumes on the other, and a stop sent to the other reaches the run.
//
// It needs a server (DATABASE_URL), so go test does not run it as an
// example; TestExample runs it against the test server and checks what it
// prints.
func Example() {
	ctx := context.Background()
	a, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL"), pgstore.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	b, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL"), pgstore.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()

	chat := &store.Chat{ID: "chat-1", History: agentloop.History{agentloop.UserMessage("Hi")}}
	if err := a.PutChat(ctx, chat); err != nil {
		fmt.Println(err)
		return
	}
	lease, _ := a.StartStream(ctx, "chat-1", time.Minute) // the run, on replica a
	stopped := make(chan error)
	go func() { stopped <- a.WaitStop(ctx, lease) }()

	active, _ := b.ActiveStream(ctx, "chat-1") // the client, back on replica b
	chunks := b.ReadStream(ctx, active.ID, 0)
	_, _ = a.AppendChunks(ctx, lease, []byte("data: Hello\n\n"))
	for chunk, err := range chunks {
		fmt.Printf("b got %q %v\n", chunk.Data, err)
		_ = b.StopStream(ctx, "chat-1") // the user presses stop, on b
		fmt.Println("a stopped:", <-stopped)
		_ = a.EndStream(ctx, lease, store.StreamCancelled)
	}
	info, _ := b.GetStream(ctx, lease.StreamID)
	fmt.Println(info.State, info.Len)
	// Printed:
	// b got "data: Hello\n\n" <nil>
	// a stopped: <nil>
	// cancelled 1
}

func TestExample(t *testing.T) {
	url, schema := pgstore.TestServer(t), pgstore.TestFreshSchema(t)
	s, err := pgstore.Open(t.Context(), url, pgstore.Options{Schema: schema}) // makes the schema
	require.NoError(t, err)
	require.NoError(t, s.Close())
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	t.Setenv("DATABASE_URL", url+sep+"search_path="+schema)

	r, w, err := os.Pipe()
	require.NoError(t, err)
	stdout := os.Stdout
	os.Stdout = w
	func() {
		defer func() { os.Stdout = stdout }()
		Example()
	}()
	require.NoError(t, w.Close())
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, "b got \"data: Hello\\n\\n\" <nil>\na stopped: <nil>\ncancelled 1\n", string(out))
}
