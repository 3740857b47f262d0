package aisdktest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// fieldKind is the schema type of a chunk field.
type fieldKind uint8

const (
	kString fieldKind = iota + 1
	kBool
	kAny      // unknown: any JSON, null included
	kProvMeta // record<string, record<string, JSON>>
	kRecord   // record<string, JSON>
	kArray
	kFinishReason
	kInputEncoding
	kNonNegInt
	kStringRecord  // record<string, string>
	kCitations     // array of citations (text-end)
	kSteeringParts // array of steering-message parts
)

type fieldSpec struct {
	name string
	kind fieldKind
}

var (
	pm       = fieldSpec{"providerMetadata", kProvMeta}
	toolOpts = []fieldSpec{{"providerExecuted", kBool}, pm, {"toolMetadata", kRecord}, {"dynamic", kBool}, {"title", kString}}
)

// chunkSchemas holds, per chunk type, its required and optional fields
// (ui-message-stream.md §2.1). Unknown extra keys are allowed.
var chunkSchemas = map[string]struct{ req, opt []fieldSpec }{
	"start":                  {nil, []fieldSpec{{"messageId", kString}, {"messageMetadata", kAny}}},
	"start-step":             {},
	"finish-step":            {},
	"reset-step":             {},
	"text-start":             {[]fieldSpec{{"id", kString}}, []fieldSpec{pm}},
	"text-delta":             {[]fieldSpec{{"id", kString}, {"delta", kString}}, []fieldSpec{pm}},
	"text-end":               {[]fieldSpec{{"id", kString}}, []fieldSpec{{"citations", kCitations}, pm}},
	"reasoning-start":        {[]fieldSpec{{"id", kString}}, []fieldSpec{pm}},
	"reasoning-delta":        {[]fieldSpec{{"id", kString}, {"delta", kString}}, []fieldSpec{pm}},
	"reasoning-end":          {[]fieldSpec{{"id", kString}}, []fieldSpec{pm}},
	"error":                  {[]fieldSpec{{"errorText", kString}}, nil},
	"tool-input-start":       {[]fieldSpec{{"toolCallId", kString}, {"toolName", kString}}, append([]fieldSpec{{"inputEncoding", kInputEncoding}}, toolOpts...)},
	"tool-input-delta":       {[]fieldSpec{{"toolCallId", kString}, {"inputTextDelta", kString}}, nil},
	"tool-input-available":   {[]fieldSpec{{"toolCallId", kString}, {"toolName", kString}, {"input", kAny}}, toolOpts},
	"tool-input-error":       {[]fieldSpec{{"toolCallId", kString}, {"toolName", kString}, {"input", kAny}, {"errorText", kString}}, toolOpts},
	"tool-approval-request":  {[]fieldSpec{{"approvalId", kString}, {"toolCallId", kString}}, []fieldSpec{{"approvalDescriptor", kAny}, {"inputSchemaInput", kAny}, {"reason", kString}, {"isAutomatic", kBool}, {"signature", kString}}},
	"tool-approval-response": {[]fieldSpec{{"approvalId", kString}, {"approved", kBool}}, []fieldSpec{{"reason", kString}, {"providerExecuted", kBool}, pm}},
	"tool-output-available":  {[]fieldSpec{{"toolCallId", kString}, {"output", kAny}}, []fieldSpec{{"providerExecuted", kBool}, pm, {"toolMetadata", kRecord}, {"dynamic", kBool}, {"preliminary", kBool}}},
	"tool-output-error":      {[]fieldSpec{{"toolCallId", kString}, {"errorText", kString}}, []fieldSpec{{"providerExecuted", kBool}, pm, {"toolMetadata", kRecord}, {"dynamic", kBool}}},
	"tool-output-denied":     {[]fieldSpec{{"toolCallId", kString}}, nil},
	"source-url":             {[]fieldSpec{{"sourceId", kString}, {"url", kString}}, []fieldSpec{{"title", kString}, pm}},
	"source-document":        {[]fieldSpec{{"sourceId", kString}, {"mediaType", kString}, {"title", kString}}, []fieldSpec{{"filename", kString}, pm}},
	"file":                   {[]fieldSpec{{"url", kString}, {"mediaType", kString}}, []fieldSpec{pm}},
	"reasoning-file":         {[]fieldSpec{{"url", kString}, {"mediaType", kString}}, []fieldSpec{pm}},
	"custom":                 {[]fieldSpec{{"kind", kString}}, []fieldSpec{pm}},
	"steering-message":       {[]fieldSpec{{"id", kString}, {"parts", kSteeringParts}}, nil},
	"finish":                 {nil, []fieldSpec{{"finishReason", kFinishReason}, {"messageMetadata", kAny}}},
	"abort":                  {nil, []fieldSpec{{"reason", kString}}},
	"message-metadata":       {[]fieldSpec{{"messageMetadata", kAny}}, nil},
}

var dataChunkSchema = struct{ req, opt []fieldSpec }{[]fieldSpec{{"data", kAny}}, []fieldSpec{{"id", kString}, {"transient", kBool}}}

// ValidateChunk checks one chunk (the data of an SSE event) against the AI
// SDK client's chunk schema (uiMessageChunkSchema of ai@7): known type,
// required fields present, typed optional fields absent rather than null,
// finishReason and inputEncoding enums, providerMetadata two levels deep,
// citations and steering-message parts. Unknown extra keys are allowed. It
// does not check ordering (a [ChatClient] does). The error wraps
// [ErrProtocol] and names the field.
func ValidateChunk(data []byte) error {
	if _, _, err := validateChunk(string(data)); err != nil {
		return fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	return nil
}

// validateChunk checks a chunk against the client's schema and returns its
// fields and type.
func validateChunk(data string) (map[string]json.RawMessage, string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data), &fields); err != nil {
		return nil, "", fmt.Errorf("not a JSON object: %w", err)
	}
	var typ string
	if err := json.Unmarshal(fields["type"], &typ); err != nil || fields["type"] == nil {
		return nil, "", errors.New(`"type" is missing or not a string`)
	}
	schema, ok := chunkSchemas[typ]
	if !ok {
		if !strings.HasPrefix(typ, "data-") {
			return nil, typ, fmt.Errorf("unknown chunk type %q", typ)
		}
		schema = dataChunkSchema
	}
	if err := checkFields(fields, schema.req, schema.opt); err != nil {
		return nil, typ, fmt.Errorf("%s: %w", typ, err)
	}
	return fields, typ, nil
}

// checkFields checks an object's required and optional fields.
func checkFields(fields map[string]json.RawMessage, req, opt []fieldSpec) error {
	for _, f := range req {
		raw, ok := fields[f.name]
		if !ok {
			return fmt.Errorf("required field %q is missing", f.name)
		}
		if err := checkKind(raw, f.kind); err != nil {
			return fmt.Errorf("field %q: %w", f.name, err)
		}
	}
	for _, f := range opt {
		raw, ok := fields[f.name]
		if !ok {
			continue
		}
		if err := checkKind(raw, f.kind); err != nil {
			return fmt.Errorf("optional field %q: %w (omit the key instead)", f.name, err)
		}
	}
	return nil
}

// checkUnion checks each element of an array against the variant its
// discriminator key selects.
func checkUnion(raw json.RawMessage, key string, variants map[string][2][]fieldSpec) error {
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return fmt.Errorf("want an array of objects, got %s", raw)
	}
	for i, it := range items {
		var d string
		_ = json.Unmarshal(it[key], &d)
		v, ok := variants[d]
		if !ok {
			return fmt.Errorf("element %d: %q %s is not one of the allowed kinds", i, key, it[key])
		}
		if err := checkFields(it, v[0], v[1]); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	return nil
}

var (
	citationSources = map[string][2][]fieldSpec{
		"url":      {{{"type", kString}, {"id", kString}, {"url", kString}}, {{"title", kString}, pm}},
		"document": {{{"type", kString}, {"id", kString}, {"mediaType", kString}, {"title", kString}}, {{"filename", kString}, pm}},
	}
	steeringParts = map[string][2][]fieldSpec{
		"text": {{{"text", kString}}, {pm}},
		"file": {{{"mediaType", kString}, {"url", kString}}, {{"filename", kString}, {"providerReference", kStringRecord}, pm}},
	}
)

func checkCitations(raw json.RawMessage) error {
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return fmt.Errorf("want an array of citations, got %s", raw)
	}
	for i, it := range items {
		if err := checkFields(it, []fieldSpec{{"source", kRecord}}, []fieldSpec{{"startIndex", kNonNegInt}, {"endIndex", kNonNegInt}, {"citedText", kString}}); err != nil {
			return fmt.Errorf("citation %d: %w", i, err)
		}
		if string(it["source"]) == "null" {
			return fmt.Errorf("citation %d: source is null", i)
		}
		var src map[string]json.RawMessage
		_ = json.Unmarshal(it["source"], &src)
		if string(src["type"]) != `"source"` {
			return fmt.Errorf(`citation %d: source.type %s, want "source"`, i, src["type"])
		}
		if err := checkUnion(json.RawMessage("["+string(it["source"])+"]"), "sourceType", citationSources); err != nil {
			return fmt.Errorf("citation %d source: %w", i, err)
		}
	}
	return nil
}

var finishReasons = []string{"stop", "length", "content-filter", "tool-calls", "error", "interrupted", "other"}

func checkKind(raw json.RawMessage, kind fieldKind) error {
	isNull := string(bytes.TrimSpace(raw)) == "null"
	if kind == kAny {
		return nil
	}
	if isNull {
		return errors.New("null is not allowed")
	}
	switch kind {
	case kString:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return fmt.Errorf("want a string, got %s", raw)
		}
	case kBool:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return fmt.Errorf("want a boolean, got %s", raw)
		}
	case kArray:
		var a []json.RawMessage
		if json.Unmarshal(raw, &a) != nil {
			return fmt.Errorf("want an array, got %s", raw)
		}
	case kRecord:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return fmt.Errorf("want an object, got %s", raw)
		}
	case kProvMeta:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return fmt.Errorf("want an object of objects, got %s", raw)
		}
		for k, v := range m {
			var inner map[string]json.RawMessage
			if json.Unmarshal(v, &inner) != nil || string(bytes.TrimSpace(v)) == "null" {
				return fmt.Errorf("want {provider: {key: value}}, but %q is %s", k, v)
			}
		}
	case kNonNegInt:
		var n int64
		if json.Unmarshal(raw, &n) != nil || n < 0 {
			return fmt.Errorf("want a non-negative integer, got %s", raw)
		}
	case kStringRecord:
		var m map[string]string
		if json.Unmarshal(raw, &m) != nil {
			return fmt.Errorf("want an object of strings, got %s", raw)
		}
	case kCitations:
		return checkCitations(raw)
	case kSteeringParts:
		return checkUnion(raw, "type", steeringParts)
	case kFinishReason, kInputEncoding:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return fmt.Errorf("want a string, got %s", raw)
		}
		allowed := []string{"json", "text"}
		if kind == kFinishReason {
			allowed = finishReasons
		}
		for _, a := range allowed {
			if s == a {
				return nil
			}
		}
		return fmt.Errorf("%q is not one of %s", s, strings.Join(allowed, ", "))
	}
	return nil
}
