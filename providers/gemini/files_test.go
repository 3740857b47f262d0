package gemini_test

import (
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
)

func TestGemini_AFileItCannotTakeIsAFileErrorAndNothingIsSent(t *testing.T) {
	providertest.RejectsFiles(t, provider, map[string]providertest.RejectedFile{
		"a zip": {File: agentloop.File{MediaType: "application/zip", Filename: "a.zip", Data: []byte("PK")}, Reason: "PDFs only"},
	})
}
