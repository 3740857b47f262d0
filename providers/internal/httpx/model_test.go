package httpx_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/httpx"
)

func TestCheckModel_ABlankNameIsAnErrorNamingTheField(t *testing.T) {
	assert.EqualError(t, httpx.CheckModel("p", " "), "p: Config.Model is required")
	assert.NoError(t, httpx.CheckModel("p", "m"))
}

func TestStreamHeader_CopiesExtraAsksForSSEAndLeavesEmptyValuesOut(t *testing.T) {
	extra := http.Header{"X-Extra": {"1"}, "Authorization": {"theirs"}}
	h := httpx.StreamHeader(extra, map[string]string{"Authorization": httpx.Bearer("k"), "X-Api-Key": ""})
	assert.Equal(t, http.Header{"X-Extra": {"1"}, "Authorization": {"Bearer k"}, "Accept": {"text/event-stream"}}, h)
	assert.Equal(t, http.Header{"X-Extra": {"1"}, "Authorization": {"theirs"}}, extra, "extra is not modified")
	assert.Equal(t, http.Header{"Accept": {"text/event-stream"}}, httpx.StreamHeader(nil, map[string]string{"Authorization": httpx.Bearer("")}), "no key, no header")
}

func TestNoFiles_AFileIsAFileErrorNamingMessageAndPart(t *testing.T) {
	msg := agentloop.Message{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("x"),
		{Type: agentloop.PartFile, File: &agentloop.File{MediaType: "image/png", Filename: "a.png"}}}}
	err := httpx.NoFiles("p", "P takes files", 3, msg)
	assert.ErrorIs(t, err, agentloop.ErrUnsupportedFile)
	assert.Equal(t, &agentloop.FileError{Provider: "p", Message: 3, Part: 1, MediaType: "image/png", Filename: "a.png",
		Reason: "P takes files in user messages only, not in assistant messages"}, err)
	assert.NoError(t, httpx.NoFiles("p", "P takes files", 0, agentloop.UserMessage("hi")))
}
