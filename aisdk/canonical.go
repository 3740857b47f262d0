package aisdk

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/agentloop/agentloop/internal/jsonscan"
)

// This file is the canonical form of the JSON values that signatures cover
// (tool inputs and outputs): one pass over the value, writing the form as
// it goes. Values it does not take (duplicate keys, keys that need
// escaping, numbers out of float64's range, invalid JSON) go to
// canonicalStd, the same form made by encoding/json, which the fuzz tests
// hold the one pass to.

// canonicalValue returns a JSON value in a form that survives a trip
// through a browser: decoded as JavaScript decodes it (numbers as float64,
// the last of duplicate keys, -0 as 0) and encoded with sorted keys, as
// encoding/json encodes a map[string]any. Text that is not JSON is
// returned with a prefix no JSON has, so that it only equals itself.
func canonicalValue(raw json.RawMessage) string {
	if s, ok := canonicalFast(raw); ok {
		return s
	}
	return canonicalStd(raw)
}

// canonicalFast is canonicalValue in one pass; it reports false for the
// values it leaves to canonicalStd.
func canonicalFast(raw json.RawMessage) (string, bool) {
	c := canonicalizers.Get().(*canonicalizer)
	defer c.release()
	c.d.Reset(raw)
	if c.value() && c.d.Finish() {
		return string(c.out), true
	}
	return "", false
}

// appendCanonical appends canonicalValue(raw) to dst.
func appendCanonical(dst []byte, raw json.RawMessage) []byte {
	c := canonicalizers.Get().(*canonicalizer)
	defer c.release()
	c.d.Reset(raw)
	if c.value() && c.d.Finish() {
		return append(dst, c.out...)
	}
	return append(dst, canonicalStd(raw)...)
}

// canonicalizers are reused, with their buffers, from value to value:
// a value's canonical form then costs the allocation of its string only.
var canonicalizers = sync.Pool{New: func() any { return new(canonicalizer) }}

// release empties c and puts it back in canonicalizers, unless its
// buffers grew past what is worth keeping.
func (c *canonicalizer) release() {
	if cap(c.out) > 64<<10 || cap(c.moved) > 64<<10 || cap(c.members) > 1024 {
		return
	}
	c.d.Reset(nil)
	c.out, c.members, c.moved = c.out[:0], c.members[:0], c.moved[:0]
	canonicalizers.Put(c)
}

// canonicalStd is canonicalValue by way of encoding/json.
func canonicalStd(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "\x00" + string(raw)
	}
	b, err := json.Marshal(normalize(v))
	if err != nil {
		return "\x00" + string(raw)
	}
	return string(b)
}

func normalize(v any) any {
	switch x := v.(type) {
	case float64:
		if x == 0 {
			return float64(0) // JSON.stringify(-0) is "0"
		}
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normalize(x[k])
		}
	}
	return v
}

// canonicalizer writes the canonical form of the value its decoder reads.
type canonicalizer struct {
	d       jsonscan.Decoder
	out     []byte
	members []member // of the objects being written, a stack
	moved   []byte   // an object's members while they are put in order
}

// member is one "key":value of an object, at out[start:end]; its key,
// quoted, ends at keyEnd.
type member struct {
	start, keyEnd, end int
}

func (c *canonicalizer) value() bool {
	d := &c.d
	switch d.Kind() {
	case jsonscan.String:
		s, ok := d.Text()
		c.out = appendJSString(c.out, s)
		return ok
	case jsonscan.Number:
		n, ok := d.Number()
		if ok {
			c.out, ok = appendFloat(c.out, n)
		}
		return ok
	case jsonscan.Bool:
		v, ok := d.Bool()
		c.out = strconv.AppendBool(c.out, v)
		return ok
	case jsonscan.Null:
		c.out = append(c.out, "null"...)
		return d.Null()
	case jsonscan.Array:
		if !d.BeginArray() {
			return false
		}
		c.out = append(c.out, '[')
		for n := 0; d.More(); n++ {
			if n > 0 {
				c.out = append(c.out, ',')
			}
			if !c.value() {
				return false
			}
		}
		c.out = append(c.out, ']')
		return d.Err() == nil
	case jsonscan.Object:
		return c.object()
	}
	return false
}

// object writes an object's members as they come, and sorts them by key
// afterwards if they came in another order.
func (c *canonicalizer) object() bool {
	d := &c.d
	if !d.BeginObject() {
		return false
	}
	start := len(c.out)
	c.out = append(c.out, '{')
	base := len(c.members)
	sorted := true
	for {
		k, ok := d.Key()
		if !ok {
			break
		}
		if len(c.members) > base {
			c.out = append(c.out, ',')
		}
		m := member{start: len(c.out)}
		c.out = appendJSString(c.out, k)
		m.keyEnd = len(c.out)
		if m.keyEnd-m.start != len(k)+2 {
			return false // escaped: the order of the written keys is not the keys' order
		}
		if len(c.members) > base {
			switch bytes.Compare(c.key(c.members[len(c.members)-1]), k) {
			case 0:
				return false // a duplicate key
			case 1:
				sorted = false
			}
		}
		c.out = append(c.out, ':')
		if !c.value() {
			return false
		}
		m.end = len(c.out)
		c.members = append(c.members, m)
	}
	if d.Err() != nil {
		return false
	}
	if !sorted {
		ms := c.members[base:]
		slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(c.key(a), c.key(b)) })
		for i := 1; i < len(ms); i++ {
			if bytes.Equal(c.key(ms[i-1]), c.key(ms[i])) {
				return false
			}
		}
		c.moved = append(c.moved[:0], c.out[start:]...)
		c.out = append(c.out[:start], '{')
		for i, m := range ms {
			if i > 0 {
				c.out = append(c.out, ',')
			}
			c.out = append(c.out, c.moved[m.start-start:m.end-start]...)
		}
	}
	c.members = c.members[:base]
	c.out = append(c.out, '}')
	return true
}

// key returns a member's key as written, without its quotes.
func (c *canonicalizer) key(m member) []byte {
	return c.out[m.start+1 : m.keyEnd-1]
}

// appendFloat appends a JSON number as encoding/json writes the float64 it
// decodes to (and 0 for -0); it reports false for a number out of range.
func appendFloat(dst, num []byte) ([]byte, bool) {
	digits := num
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) <= 15 && bytes.IndexAny(digits, ".eE") < 0 {
		// An integer a float64 holds exactly, written as it came.
		if string(digits) == "0" {
			return append(dst, '0'), true
		}
		return append(dst, num...), true
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return dst, false
	}
	if f == 0 {
		return append(dst, '0'), true
	}
	format := byte('f')
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-07 as e-7, as encoding/json writes it
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// appendJSString appends s as a JSON string the way encoding/json's
// Marshal writes it: with <, > and & escaped (HTML-safe), U+2028 and
// U+2029 escaped, and invalid UTF-8 as \ufffd.
func appendJSString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
