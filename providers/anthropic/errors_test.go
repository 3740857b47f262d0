package anthropic_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/internal/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const firstDelta = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n"

const textBody = firstDelta +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

func TestAnthropic_SendsVersionAndKeyHeadersAndDefaultMaxTokens(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte(textBody))
	chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, "Hello", providertest.Summarize(chunks).Text)
	assert.Equal(t, []agentloop.Usage{{Input: 3, Output: 2}}, providertest.Summarize(chunks).Usage)
	h := srv.Request(t, 0).Header
	assert.Equal(t, "2023-06-01", h.Get("anthropic-version"))
	assert.Equal(t, "sk-ant-test", h.Get("x-api-key"))
	assert.Contains(t, string(srv.Request(t, 0).Body), `"max_tokens":4096`)
}

// Retries, cut, early-ended, malformed and cancelled streams, an
// unreachable server and a nil request: the checks every HTTP provider
// passes.
func TestAnthropic_HandlesErrorsAndCancellationAsEveryProviderDoes(t *testing.T) {
	providertest.Errors(t, provider)
}

func TestAnthropic_529Then200RetriesOnceThenStreams(t *testing.T) {
	srv := providertest.NewServer(t,
		providertest.Reply{Status: 529, Body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
		providertest.SSE([]byte(textBody)))
	m := newModel(t, srv.URL)
	var waits []time.Duration
	anthropic.SetRetrySleep(m, func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil })
	chunks, err := providertest.Collect(m, providertest.UserRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, "Hello", providertest.Summarize(chunks).Text)
	assert.Len(t, srv.Requests(), 2)
	assert.Len(t, waits, 1)
}

func TestAnthropic_HTTPErrorBodyBecomesAPIError(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Status: 401,
		Body: []byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)})
	_, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	assert.ErrorIs(t, err, providers.ErrAuth)
	assert.EqualError(t, err, "anthropic: HTTP 401 (authentication_error): invalid x-api-key")
}

func TestAnthropic_ErrorEventInsideA200StreamIsYieldedLast(t *testing.T) {
	body := firstDelta + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	srv := providertest.NewSSEServer(t, []byte(body))
	chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
	assert.Equal(t, "Hel", providertest.Summarize(chunks).Text)
	assert.ErrorIs(t, err, providers.ErrOverloaded)
	assert.EqualError(t, err, "anthropic: stream error (overloaded_error): Overloaded")
}

func TestAnthropic_NewNamesTheBadField(t *testing.T) {
	_, err := anthropic.New(anthropic.Config{})
	assert.ErrorContains(t, err, "Config.Model")
	_, err = anthropic.New(anthropic.Config{Model: "m", BaseURL: "::"})
	assert.ErrorContains(t, err, "Config.BaseURL")
	_, err = anthropic.New(anthropic.Config{Model: "m", ThinkingBudget: -1})
	assert.ErrorContains(t, err, "Config.ThinkingBudget")
}
