package simtest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

func withFiles(fs ...agentloop.File) *agentloop.Request {
	parts := []agentloop.Part{agentloop.TextPart("What is this?")}
	for _, f := range fs {
		parts = append(parts, agentloop.Part{Type: agentloop.PartFile, File: &f})
	}
	return &agentloop.Request{Messages: agentloop.History{
		{Role: agentloop.RoleUser, Parts: []agentloop.Part{{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "application/pdf", Filename: "old.pdf"}}}},
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("Read it.")}},
		{Role: agentloop.RoleUser, Parts: parts},
	}}
}

func TestExpectFiles_MatchesTheLatestUserMessagesFiles(t *testing.T) {
	cat := agentloop.File{MediaType: "image/png", Filename: "cat.png", Data: []byte("png")}
	dog := agentloop.File{MediaType: "image/jpeg", Filename: "dog.jpg", Data: []byte("jpg")}
	for name, tc := range map[string]struct {
		want []simtest.ExpectFile
		req  *agentloop.Request
		err  string
	}{
		"exact":            {[]simtest.ExpectFile{{MediaType: "image/png", Filename: "cat.png"}}, withFiles(cat), ""},
		"any image":        {[]simtest.ExpectFile{{MediaType: "image/*"}, {MediaType: "image/*"}}, withFiles(cat, dog), ""},
		"no file expected": {[]simtest.ExpectFile{}, withFiles(), ""},
		"missing": {[]simtest.ExpectFile{{MediaType: "image/png"}}, withFiles(),
			`simtest: turn 1: latest user files: want image/png, got no file`},
		"wrong name": {[]simtest.ExpectFile{{MediaType: "image/png", Filename: "dog.png"}}, withFiles(cat),
			`simtest: turn 1: latest user files: want "dog.png" (image/png), got "cat.png" (image/png)`},
		"wrong type": {[]simtest.ExpectFile{{MediaType: "application/*"}}, withFiles(cat),
			`simtest: turn 1: latest user files: want application/*, got "cat.png" (image/png)`},
		"one too many": {[]simtest.ExpectFile{{MediaType: "image/png"}}, withFiles(cat, dog),
			`simtest: turn 1: latest user files: want image/png, got "cat.png" (image/png), "dog.jpg" (image/jpeg)`},
		"wrong order": {[]simtest.ExpectFile{{MediaType: "image/jpeg"}, {MediaType: "image/png"}}, withFiles(cat, dog),
			`simtest: turn 1: latest user files: want image/jpeg, image/png, got "cat.png" (image/png), "dog.jpg" (image/jpeg)`},
	} {
		m := simtest.NewModel(simtest.Turn{Expect: simtest.Expect{Files: tc.want}, Reply: []simtest.Step{simtest.Text("A cat.")}})
		_, err := stream(t, m, tc.req)
		if tc.err == "" {
			assert.NoError(t, err, name)
			continue
		}
		var ee *simtest.ExpectationError
		require.ErrorAs(t, err, &ee, name)
		assert.EqualError(t, err, tc.err, name)
	}
}

func TestParseScript_ReadsFileExpectations(t *testing.T) {
	s, err := simtest.ParseScript([]byte(`{"turns":[{"expect":{"files":[{"media_type":"image/*","filename":"cat.png"}]},"reply":[{"text":"A cat."}]}]}`))
	require.NoError(t, err)
	assert.Equal(t, []simtest.ExpectFile{{MediaType: "image/*", Filename: "cat.png"}}, s.Turns[0].Expect.Files)
	_, err = simtest.ParseScript([]byte(`{"turns":[{"expect":{"files":[{"mediaType":"image/png"}]},"reply":[]}]}`))
	assert.ErrorIs(t, err, simtest.ErrBadScript, "an unknown key in a file expectation")
}
