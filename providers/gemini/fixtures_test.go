package gemini_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/providers/internal/providertest"
)

func TestGemini_RecordedStreamsYieldWhatTheSidecarsSay(t *testing.T) {
	for _, c := range []struct {
		file string
		want []agentloop.Chunk
	}{
		{"vercel-tool-call-thought-signature.chunks.jsonl", []agentloop.Chunk{
			agentloop.ReasoningEnd{Signature: "EqUCCqICAb4+9vsh8Pd5taZVoPzSvjWWwzBrvhEQWBLCGa7IdY8FBMm7Z6dCKFU3Ft0la15gF7RaHe1NlPRygQec0bFwPDfMwGcUOMNiJiNIKxusCs4ejCZRuouNYQ4etEIt7CujEUHiILLfZXSJZYhs4UCrD2bLqPq0sE0lWgYJnzHkkKUOnMsA2hKffAhtF4DWn5INYj8pPssvch/2VpDFW2F9XSE04zLDzkIWF2eztJX50Y0lTehRZC3FW7fOrXCzGx+PwdataD6eXlF5O1zn+86XtmktOs2DEp4o1PMvXFFAXe8GGvPt8Idf3UtHMq7AsapwMW9sjiKj+FJk54m+9LMTSaj7C86smfvoQryYBEHTVazr1bEnpl4bPG5JUtm2yAMkHj4="},
			agentloop.ToolCall{Name: "weather", Args: json.RawMessage(`{"location":"San Francisco"}`)},
			agentloop.Usage{Input: 29, Output: 15 + 45, Reasoning: 45},
			agentloop.Finish{Reason: agentloop.FinishToolCalls},
		}},
		{"vercel-reasoning-text-signature.chunks.jsonl", []agentloop.Chunk{
			agentloop.TextDelta{Text: "There are **3** \"r\"s in"},
			agentloop.TextDelta{Text: " strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y."},
			agentloop.ReasoningEnd{Signature: "Eo0HCooHAb4+9vutXdtKMt+r7Z3gLh52ZQ3RKYDzp4A6PHh0dLuvI1KwnLxDS/qm8wn4Gm9NNNQ1nBS/rrCAvr4GUTqanTkyxQb0ctdgoMiQJ/BwIXliPqJ5C+YtnXZfktX+roGCDmCE4qimrCzgW4TytiSC4glx6CPNVCUT2S/vrK3WT1Dn8DpykEIddvSH5PRxAOXQHjPfwQ9BUcBVw3/6+dTv/IgIIDbSkt0Lmy/Vww80oAWSDph0YpK2OXdpuZnUjscFeKJFqMJeuc3OAuAMIeb1GSwD2l5bcufkMqBDSZb00QxjTqrQm7DHbauxrz7oNCJRtRFQlrGrrMx2ut2eXzeEamNGXf433pMBZBi0BxhFWBCuZemJQIzY/LHiHT7jTjaiZIISyAMFC7u/WTY5ONRa9wWQ76NJVmriCm2+Mo1GXVGAkwwD54qiKgGxvFEWeJqP+13Esuw02QwHEVWnIbQUhaEYDIvR//AGPvDJVpzZmDfv9mcJSa09z4/UG2sadoftByt44eW3gBINtmeUAGjn52wETOxUsq/2qz/zkxvySOpUcXFKAktjgLdA7tHMYRgrCUgYcfznZc1XlyCivb7imNJadsVg0O5SMcnBLAme/0cnnOUrZK1CW+7S5UM8408GE9soyHAXf92y8mZ3n9YoEPKhuf0OjMSYoI9MOqhkIZxj8IaOAuaH8PrAd2nI6Y82jCFF81ZxJN+YyL/NNL3iURvtPHJ2hGjQGdzYnm62CYEAG8t5bEZwix6agxhyY1uM/Atj1nvD/bpVvvBENrMPWFhI0O8IvJ2bdJh2AcKSLQveWZpqs8HQoUMZcOQPs61wn9se+NKh760oCvLDcfNxWSInIFpLuZdL8xzluDxu1FXm75LFPoTRnbCUAG9PcJJWyoM3SLgw3SaoRIjwkAbdOK47NwYhS1WSvgxQwbnMix75XKez8Ja17/o847oplrjiezqJVpQsMqs6mxRWnFIDl1mgw+BQSEl67wKTAaPC7nX6x2Px+H2PM20RqdWTd5RiwST6Gm0eQjekJG3G+Xtnhte1ubcnCu3bMMaza0uwsy5imuHj8KJaQbAEWtIEAhFJBNvnlZGnqFZPRWwMnJ28nSBe8VAdGOLOPP96hlbCe/3D0PBYEFGz1K7G108h7jr082IZ47P9Vk4CrOI7DdfmbfcnfiQKys8pHj6H981zw5xogUmwAj/uUJKN"},
			agentloop.Usage{Input: 9, Output: 29 + 256, Reasoning: 256},
			agentloop.Finish{Reason: agentloop.FinishStop},
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			srv := providertest.NewSSEServer(t, fixture(t, c.file))
			chunks, err := providertest.Collect(newModel(t, srv.URL), providertest.UserRequest("hi"))
			require.NoError(t, err)
			if d := cmp.Diff(c.want, chunks); d != "" {
				t.Errorf("chunks (-want +got):\n%s", d)
			}
		})
	}
}
