package providertest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
)

// FilePart is a message part carrying f.
func FilePart(f agentloop.File) agentloop.Part {
	return agentloop.Part{Type: agentloop.PartFile, File: &f}
}

// UserFile is a history of one user message: the text "see", then f as
// part 1.
func UserFile(f agentloop.File) agentloop.History {
	return agentloop.History{{Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("see"), FilePart(f)}}}
}

// RejectedFile is a file a provider cannot take; Reason is in the
// FileError's reason.
type RejectedFile struct {
	File   agentloop.File
	Reason string
}

// RejectsFiles checks, as a subtest per case, that sending each of
// rejected in a user message, a file with a bad data URL, and any file in a
// system or an assistant message is an *agentloop.FileError (errors.Is
// agentloop.ErrUnsupportedFile) that names p, the message and the part,
// and that nothing is sent.
func RejectsFiles(t *testing.T, p Provider, rejected map[string]RejectedFile) {
	pdf := agentloop.File{MediaType: "application/pdf", Filename: "a.pdf", Data: []byte("%PDF")}
	type tc struct {
		h      agentloop.History
		msg    int
		reason string
	}
	cases := map[string]tc{
		"bad data URL":      {UserFile(agentloop.File{MediaType: "image/png", Filename: "a.png", URL: "data:image/png;base64,@"}), 0, "base64"},
		"a system file":     {agentloop.History{{Role: agentloop.RoleSystem, Parts: []agentloop.Part{agentloop.TextPart("rules"), FilePart(pdf)}}, agentloop.UserMessage("hi")}, 0, "not in system messages"},
		"an assistant file": {agentloop.History{agentloop.UserMessage("draw"), {Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("here"), FilePart(pdf)}}}, 1, "not in assistant messages"},
	}
	for name, r := range rejected {
		cases[name] = tc{UserFile(r.File), 0, r.Reason}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := NewSSEServer(t, p.Text)
			_, err := Collect(p.New(t, srv.URL, 0), &agentloop.Request{Messages: tc.h})
			var fe *agentloop.FileError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.ErrorIs(t, err, agentloop.ErrUnsupportedFile)
			assert.Equal(t, p.Name, fe.Provider)
			assert.Equal(t, tc.msg, fe.Message)
			assert.Equal(t, 1, fe.Part)
			assert.Contains(t, fe.Reason, tc.reason)
			assert.Empty(t, srv.Requests(), "nothing is sent")
		})
	}
}

// SentFile is a file and the JSON a provider sends for it.
type SentFile struct {
	File agentloop.File
	Want string
}

// SendsFiles checks, as a subtest per case, that a user message of the
// text "What?" and the case's file is sent: sent returns, from the request
// body, the JSON that stands for the message's parts, which must equal
// wrap(the case's Want) (wrap may be nil: Want as it is).
func SendsFiles(t *testing.T, p Provider, sent func(t testing.TB, body []byte) string, wrap func(want string) string, cases map[string]SentFile) {
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			srv := NewSSEServer(t, p.Text)
			_, err := Collect(p.New(t, srv.URL, 0), &agentloop.Request{Messages: agentloop.History{{Role: agentloop.RoleUser, Parts: []agentloop.Part{agentloop.TextPart("What?"), FilePart(c.File)}}}})
			require.NoError(t, err)
			want := c.Want
			if wrap != nil {
				want = wrap(want)
			}
			assert.JSONEq(t, want, sent(t, srv.Request(t, 0).Body))
		})
	}
}
