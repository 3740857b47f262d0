package aisdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ParseChunk decodes one chunk from its wire JSON and checks it the way the
// AI SDK 7 client does: a known type, every required key present ("input",
// "output" and "data" may be null but not absent), no typed optional field
// set to null, and a finishReason the client knows. The error names the type
// and the field. The chunk is returned as a value of its type (StartChunk,
// TextDeltaChunk, …), as the package's own chunks are.
func ParseChunk(data []byte) (Chunk, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, fmt.Errorf("aisdk: chunk is not a JSON object: %w", err)
	}
	rawType, ok := keys["type"]
	if !ok {
		return nil, errors.New(`aisdk: chunk has no "type"`)
	}
	var typ string
	if err := json.Unmarshal(rawType, &typ); err != nil {
		return nil, fmt.Errorf(`aisdk: chunk "type" is not a string: %w`, err)
	}
	name, isData := strings.CutPrefix(typ, "data-")
	spec, ok := chunkSpecs[typ]
	if isData {
		spec, ok = chunkSpecs["data-"], true
	}
	if !ok {
		return nil, fmt.Errorf("aisdk: unknown chunk type %q", typ)
	}
	for _, k := range spec.required {
		if _, ok := keys[k]; !ok {
			return nil, fmt.Errorf("aisdk: %s chunk: missing required field %q", typ, k)
		}
	}
	for k, v := range keys {
		if k == "type" || spec.nullable[k] {
			continue
		}
		if string(bytes.TrimSpace(v)) == "null" {
			return nil, fmt.Errorf("aisdk: %s chunk: field %q is null (optional fields must be absent instead)", typ, k)
		}
	}
	c, err := spec.decode(data)
	if err != nil {
		return nil, fmt.Errorf("aisdk: %s chunk: %w", typ, err)
	}
	switch v := c.(type) {
	case DataChunk:
		v.Name = name
		c = v
	case FinishChunk:
		// encoding/json matches keys case-insensitively, so "FinishReason"
		// fills the field too: check the decoded value, not the key.
		if _, ok := keys["finishReason"]; (ok || v.FinishReason != "") && !v.FinishReason.valid() {
			return nil, fmt.Errorf("aisdk: finish chunk: finishReason %q is not one of stop, length, content-filter, tool-calls, error, interrupted, other", v.FinishReason)
		}
	}
	return c, nil
}

// chunkSpec is what ParseChunk knows about one chunk type.
type chunkSpec struct {
	decode   func([]byte) (Chunk, error)
	required []string
	nullable map[string]bool // keys typed unknown in the client's schema: null is a value
}

// decodeAs decodes the fields of a chunk of type T ("type" is ignored).
func decodeAs[T Chunk](data []byte) (Chunk, error) {
	var c T
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	return c, nil
}

var (
	inputNullable  = map[string]bool{"input": true, "approvalDescriptor": true, "inputSchemaInput": true}
	outputNullable = map[string]bool{"output": true}
	metaNullable   = map[string]bool{"messageMetadata": true}
)

// chunkSpecs lists every chunk type of AI SDK 7 ("data-" stands for every
// data-<name> type), after uiMessageChunkSchema in ai@7.
var chunkSpecs = map[string]chunkSpec{
	"start":                  {decode: decodeAs[StartChunk], nullable: metaNullable},
	"start-step":             {decode: decodeAs[StartStepChunk]},
	"finish-step":            {decode: decodeAs[FinishStepChunk]},
	"reset-step":             {decode: decodeAs[ResetStepChunk]},
	"text-start":             {decode: decodeAs[TextStartChunk], required: []string{"id"}},
	"text-delta":             {decode: decodeAs[TextDeltaChunk], required: []string{"id", "delta"}},
	"text-end":               {decode: decodeAs[TextEndChunk], required: []string{"id"}},
	"reasoning-start":        {decode: decodeAs[ReasoningStartChunk], required: []string{"id"}},
	"reasoning-delta":        {decode: decodeAs[ReasoningDeltaChunk], required: []string{"id", "delta"}},
	"reasoning-end":          {decode: decodeAs[ReasoningEndChunk], required: []string{"id"}},
	"error":                  {decode: decodeAs[ErrorChunk], required: []string{"errorText"}},
	"tool-input-start":       {decode: decodeAs[ToolInputStartChunk], required: []string{"toolCallId", "toolName"}},
	"tool-input-delta":       {decode: decodeAs[ToolInputDeltaChunk], required: []string{"toolCallId", "inputTextDelta"}},
	"tool-input-available":   {decode: decodeAs[ToolInputAvailableChunk], required: []string{"toolCallId", "toolName", "input"}, nullable: inputNullable},
	"tool-input-error":       {decode: decodeAs[ToolInputErrorChunk], required: []string{"toolCallId", "toolName", "input", "errorText"}, nullable: inputNullable},
	"tool-approval-request":  {decode: decodeAs[ToolApprovalRequestChunk], required: []string{"approvalId", "toolCallId"}, nullable: inputNullable},
	"tool-approval-response": {decode: decodeAs[ToolApprovalResponseChunk], required: []string{"approvalId", "approved"}},
	"tool-output-available":  {decode: decodeAs[ToolOutputAvailableChunk], required: []string{"toolCallId", "output"}, nullable: outputNullable},
	"tool-output-error":      {decode: decodeAs[ToolOutputErrorChunk], required: []string{"toolCallId", "errorText"}},
	"tool-output-denied":     {decode: decodeAs[ToolOutputDeniedChunk], required: []string{"toolCallId"}},
	"source-url":             {decode: decodeAs[SourceURLChunk], required: []string{"sourceId", "url"}},
	"source-document":        {decode: decodeAs[SourceDocumentChunk], required: []string{"sourceId", "mediaType", "title"}},
	"file":                   {decode: decodeAs[FileChunk], required: []string{"url", "mediaType"}},
	"reasoning-file":         {decode: decodeAs[ReasoningFileChunk], required: []string{"url", "mediaType"}},
	"custom":                 {decode: decodeAs[CustomChunk], required: []string{"kind"}},
	"steering-message":       {decode: decodeAs[SteeringMessageChunk], required: []string{"id", "parts"}},
	"data-":                  {decode: decodeAs[DataChunk], required: []string{"data"}, nullable: map[string]bool{"data": true}},
	"finish":                 {decode: decodeAs[FinishChunk], nullable: metaNullable},
	"abort":                  {decode: decodeAs[AbortChunk]},
	"message-metadata":       {decode: decodeAs[MessageMetadataChunk], required: []string{"messageMetadata"}, nullable: metaNullable},
}
