package realollama_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/providers/internal/tinyollama"
)

// The quickstart command records a session with the real server
// (-record), and replays it with no server (-script) to the same
// transcript: the same tool call, result and answer. A changed prompt
// fails the replay, naming the difference.
func TestQuickstart_RecordAgainstTheServerReplaysWithNoServer(t *testing.T) {
	root := server(t).URL
	dir := t.TempDir()
	bin := filepath.Join(dir, "quickstart")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/agentloop/agentloop/examples/quickstart")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	quickstart := func(args ...string) (string, string, error) {
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Env = append(cmd.Environ(), "OLLAMA_HOST=127.0.0.1:1") // only -base-url reaches the server
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	session := filepath.Join(dir, "s.json")
	const prompt = "What is the weather in Paris?"

	live, errOut, err := quickstart("-provider", "ollama", "-base-url", root, "-model", tinyollama.Tiny, "-record", session, "-prompt", prompt)
	require.NoError(t, err, "%s\nserver log:\n%s", errOut, serverLog())
	assert.Contains(t, live, `→ get_weather({"city":"Paris"})`)
	assert.Contains(t, live, tinyollama.Answer)
	assert.Contains(t, errOut, "recorded 2 model calls to "+session)

	replay, errOut, err := quickstart("-script", session, "-prompt", prompt)
	require.NoError(t, err, errOut)
	assert.Equal(t, live, replay)

	_, errOut, err = quickstart("-script", session, "-prompt", "What is the weather in Rome?")
	require.Error(t, err)
	assert.Contains(t, errOut, `simtest: turn 1: message 1 (user) text: want "What is the weather in Paris?", got "What is the weather in Rome?"`)
}
