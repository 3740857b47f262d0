package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

// A -script whose turns_by is "conversation" plays its turns per chat, and
// the server says so; other scripts play one sequence for the whole server.
func TestChooseModel_AScriptByConversationPlaysPerChat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"turns_by": "conversation", "turns": [{"reply": [{"text": "Hi."}]}]}`), 0o644))
	model, describe, err := chooseModel(config{script: path})
	require.NoError(t, err)
	assert.Contains(t, describe, "(1 turn, for each conversation)")
	agent := &agentloop.Agent{Model: model}
	for _, chat := range []string{"first chat", "second chat"} {
		text, err := agentloop.Text(agent.Stream(t.Context(), agentloop.History{agentloop.UserMessage(chat)}, nil))
		require.NoError(t, err)
		assert.Equal(t, "Hi.", text)
	}

	require.NoError(t, os.WriteFile(path, []byte(`{"turns": [{"reply": [{"text": "Hi."}]}]}`), 0o644))
	_, describe, err = chooseModel(config{script: path})
	require.NoError(t, err)
	assert.Contains(t, describe, "(1 turn, for the whole server)")
}
