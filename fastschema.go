package agentloop

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// shape is a compiled form of the plain subset of JSON Schema that
// [SchemaFor] emits for ordinary Go structs: types, properties, required,
// additionalProperties, items, string enums, and annotations. checkArgs
// uses it to accept the arguments of a call in one pass over their bytes,
// without decoding them. It only ever accepts: arguments it cannot vouch
// for go to the full validator, which decides and writes the error.
//
// Soundness (what a shape accepts, the full validator accepts) is checked
// by FuzzFastSchema_AcceptsOnlyWhatTheValidatorAccepts.
type shape struct {
	kind     shapeKind
	props    map[string]int // object: property name to index in propShapes
	propList []*shape
	required uint64 // object: bit i set when property i is required
	closed   bool   // object: additionalProperties is false
	extra    *shape // object: the schema of additional properties; nil means any
	items    *shape // array: the schema of every item; nil means any
	enum     [][]byte
}

type shapeKind uint8

const (
	shapeAny shapeKind = iota
	shapeObject
	shapeArray
	shapeString
	shapeInteger
	shapeNumber
	shapeBoolean
)

// anyShape accepts any JSON value; it is never changed.
var anyShape = shape{kind: shapeAny}

// maxFastDepth bounds the nesting the fast path follows; deeper arguments
// go to the full validator.
const maxFastDepth = 32

// compileShape returns the shape of a JSON Schema, or false when the schema
// uses anything beyond the plain subset.
func compileShape(schema json.RawMessage) (*shape, bool) {
	var doc any
	if err := json.Unmarshal(schema, &doc); err != nil {
		return nil, false
	}
	return shapeOf(doc, 0)
}

func shapeOf(doc any, depth int) (*shape, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	if b, ok := doc.(bool); ok {
		if b {
			return &shape{kind: shapeAny}, true
		}
		return nil, false
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, false
	}
	s := &shape{kind: shapeAny}
	for key, v := range m {
		switch key {
		case "description", "title", "$comment", "examples", "default", "$schema":
			// annotations
		case "type":
			t, ok := v.(string)
			if !ok {
				return nil, false
			}
			switch t {
			case "object":
				s.kind = shapeObject
			case "array":
				s.kind = shapeArray
			case "string":
				s.kind = shapeString
			case "integer":
				s.kind = shapeInteger
			case "number":
				s.kind = shapeNumber
			case "boolean":
				s.kind = shapeBoolean
			default:
				return nil, false
			}
		case "properties", "required", "additionalProperties", "items", "enum":
			// below, once the type is known
		default:
			return nil, false
		}
	}
	if props, ok := m["properties"]; ok {
		pm, ok := props.(map[string]any)
		if !ok || s.kind != shapeObject || len(pm) > 64 {
			return nil, false
		}
		s.props = make(map[string]int, len(pm))
		for name, p := range pm {
			ps, ok := shapeOf(p, depth+1)
			if !ok {
				return nil, false
			}
			s.props[name] = len(s.propList)
			s.propList = append(s.propList, ps)
		}
	}
	if req, ok := m["required"]; ok {
		list, ok := req.([]any)
		if !ok || s.kind != shapeObject {
			return nil, false
		}
		for _, r := range list {
			name, ok := r.(string)
			if !ok {
				return nil, false
			}
			i, ok := s.props[name]
			if !ok {
				return nil, false // required but not described: leave it to the validator
			}
			s.required |= 1 << i
		}
	}
	if ap, ok := m["additionalProperties"]; ok {
		if s.kind != shapeObject {
			return nil, false
		}
		if b, ok := ap.(bool); ok && !b {
			s.closed = true
		} else if s.extra, ok = shapeOf(ap, depth+1); !ok {
			return nil, false
		}
	}
	if items, ok := m["items"]; ok {
		if s.kind != shapeArray {
			return nil, false
		}
		if s.items, ok = shapeOf(items, depth+1); !ok {
			return nil, false
		}
	}
	if enum, ok := m["enum"]; ok {
		list, ok := enum.([]any)
		if !ok || s.kind != shapeString || len(list) == 0 {
			return nil, false
		}
		for _, e := range list {
			str, ok := e.(string)
			if !ok || !plainString(str) {
				return nil, false
			}
			s.enum = append(s.enum, []byte(str))
		}
	}
	return s, true
}

// plainString reports whether JSON writes s without escapes, so that its
// raw bytes in arguments compare equal to it.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// accepts reports whether data, a whole JSON text, is an instance of s. A
// false answer means "not vouched for", not "invalid".
func (s *shape) accepts(data []byte) bool {
	p := fastParser{data: data}
	p.space()
	if !p.value(s, 0) {
		return false
	}
	p.space()
	return p.pos == len(p.data)
}

// fastParser walks JSON bytes, checking them against a shape as it goes.
// Every method returns false at the first thing it cannot vouch for.
type fastParser struct {
	data []byte
	pos  int
}

func (p *fastParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *fastParser) value(s *shape, depth int) bool {
	if depth > maxFastDepth || p.pos >= len(p.data) {
		return false
	}
	if s == nil {
		s = &anyShape
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return (s.kind == shapeAny || s.kind == shapeObject) && p.object(s, depth)
	case c == '[':
		return (s.kind == shapeAny || s.kind == shapeArray) && p.array(s, depth)
	case c == '"':
		start := p.pos
		if !p.str() {
			return false
		}
		if s.kind != shapeAny && s.kind != shapeString {
			return false
		}
		return s.enum == nil || s.inEnum(p.data[start+1:p.pos-1])
	case c == 't':
		return (s.kind == shapeAny || s.kind == shapeBoolean) && p.literal("true")
	case c == 'f':
		return (s.kind == shapeAny || s.kind == shapeBoolean) && p.literal("false")
	case c == 'n':
		return s.kind == shapeAny && p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		integer, ok := p.number()
		switch s.kind {
		case shapeAny, shapeNumber:
			return ok
		case shapeInteger:
			return ok && integer
		}
	}
	return false
}

func (s *shape) inEnum(raw []byte) bool {
	for _, e := range s.enum {
		if bytes.Equal(e, raw) {
			return true
		}
	}
	return false
}

func (p *fastParser) object(s *shape, depth int) bool {
	p.pos++ // {
	var seen uint64
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return seen&s.required == s.required
	}
	for {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return false
		}
		start := p.pos
		if !p.str() {
			return false
		}
		key := p.data[start+1 : p.pos-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false // an escaped key: leave it to the validator
		}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return false
		}
		p.pos++
		p.space()
		var vs *shape
		if i, ok := s.props[string(key)]; ok { // no allocation: the conversion is only a map key
			seen |= 1 << i
			vs = s.propList[i]
		} else if s.closed {
			return false
		} else {
			vs = s.extra
		}
		if !p.value(vs, depth+1) {
			return false
		}
		p.space()
		if p.pos >= len(p.data) {
			return false
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.space()
		case '}':
			p.pos++
			return seen&s.required == s.required
		default:
			return false
		}
	}
}

func (p *fastParser) array(s *shape, depth int) bool {
	p.pos++ // [
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return true
	}
	for {
		if !p.value(s.items, depth+1) {
			return false
		}
		p.space()
		if p.pos >= len(p.data) {
			return false
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.space()
		case ']':
			p.pos++
			return true
		default:
			return false
		}
	}
}

// str reads a string with its quotes, refusing control characters, bad
// escapes and invalid UTF-8.
func (p *fastParser) str() bool {
	p.pos++ // "
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return true
		case c == '\\':
			p.pos++
			if p.pos >= len(p.data) {
				return false
			}
			switch p.data[p.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos++
			case 'u':
				if p.pos+5 > len(p.data) {
					return false
				}
				for _, h := range p.data[p.pos+1 : p.pos+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				p.pos += 5
			default:
				return false
			}
		case c < 0x20:
			return false
		case c < utf8.RuneSelf:
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return false
			}
			p.pos += size
		}
	}
	return false
}

func (p *fastParser) literal(lit string) bool {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(lit)) {
		return false
	}
	p.pos += len(lit)
	return true
}

// number reads a number as JSON writes it, and reports whether it is
// written as an integer (no fraction, no exponent).
func (p *fastParser) number() (integer, ok bool) {
	d := p.data
	if d[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(d) && d[p.pos] == '0':
		p.pos++
	case p.pos < len(d) && d[p.pos] >= '1' && d[p.pos] <= '9':
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	default:
		return false, false
	}
	integer = true
	if p.pos < len(d) && d[p.pos] == '.' {
		integer = false
		p.pos++
		if !p.digits() {
			return false, false
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		integer = false
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if !p.digits() {
			return false, false
		}
	}
	return integer, true
}

func (p *fastParser) digits() bool {
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	return p.pos > start
}
