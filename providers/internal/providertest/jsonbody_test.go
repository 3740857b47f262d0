package providertest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentloop/agentloop/providers/internal/providertest"
)

func TestTextOf_IsAStringOrTheTextOfTheParts(t *testing.T) {
	assert.Equal(t, "hi", providertest.TextOf("hi"))
	assert.Equal(t, "ab", providertest.TextOf([]any{
		map[string]any{"type": "text", "text": "a"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "x"}},
		map[string]any{"type": "output_text", "text": "b"},
	}))
	assert.Empty(t, providertest.TextOf(nil))
}

func TestCanonicalJSON_EncodingsOfOneValueCompareEqual(t *testing.T) {
	assert.Equal(t, providertest.CanonicalJSON(`{"b":1, "a":[1, 2]}`), providertest.CanonicalJSON(`{"a":[1,2],"b":1}`))
	assert.Equal(t, `{"a":[1,2],"b":1}`, providertest.CanonicalJSON(`{"b":1, "a":[1, 2]}`))
	assert.Equal(t, "not json", providertest.CanonicalJSON("not json"))
	assert.Equal(t, "7", providertest.CanonicalJSON(7))
}
