// Package jsonscan reads JSON text in one pass, without reflection and
// without building intermediate values: a [Decoder] steps through a
// document (object keys, strings, numbers, raw values) and validates it as
// it goes, by the grammar encoding/json accepts (nesting included, up to
// [MaxDepth]). Strings are unquoted exactly as encoding/json unquotes them:
// invalid UTF-8 and unpaired surrogates become U+FFFD.
//
// It is for hot paths that decode one known shape. Its errors say where the
// text went wrong but are not worded like encoding/json's; a caller that
// must report encoding/json's exact error decodes again with it when the
// Decoder fails.
//
// The zero Decoder reads an empty document; [Decoder.Reset] gives it text.
// A Decoder is not safe for concurrent use.
package jsonscan

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is how deeply arrays and objects may nest, as in encoding/json.
const MaxDepth = 10000

// Kind is the kind of the next value.
type Kind byte

// The kinds of values. Invalid is the end of the text or a byte that starts
// no value.
const (
	Invalid Kind = iota
	Object
	Array
	String
	Number
	Bool
	Null
)

// SyntaxError is the error of a Decoder: what it found at Offset, a byte
// offset into the text.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jsonscan: %s at offset %d", e.Msg, e.Offset)
}

// A Decoder reads one JSON document. Its methods consume one token or value
// each and report false on failure (or at the end of an object or array,
// for [Decoder.Key] and [Decoder.More]); after a failure, every method
// reports false and [Decoder.Err] says what went wrong.
//
// The byte slices it returns (keys, strings, raw values) alias the text or
// the Decoder's own buffer: they are valid until the next call, and callers
// copy what they keep.
type Decoder struct {
	data  []byte
	pos   int
	depth int
	// first is set by BeginObject and BeginArray: the next Key or More
	// call reads the first member, with no comma before it.
	first  bool
	spaced bool // whitespace was skipped
	err    error
	buf    []byte // unquoted strings that had escapes or invalid UTF-8
	copied bool   // the last string read was unquoted into buf
}

// Reset makes d read data from its start, keeping d's buffer.
func (d *Decoder) Reset(data []byte) {
	*d = Decoder{data: data, buf: d.buf[:0]}
}

// Err returns the first error, or nil.
func (d *Decoder) Err() error { return d.err }

func (d *Decoder) fail(msg string) bool {
	if d.err == nil {
		d.err = &SyntaxError{Offset: d.pos, Msg: msg}
	}
	return false
}

func (d *Decoder) unexpected(context string) bool {
	if d.pos >= len(d.data) {
		return d.fail("unexpected end of text " + context)
	}
	return d.fail(fmt.Sprintf("invalid character %q %s", d.data[d.pos], context))
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (d *Decoder) peek() byte {
	for d.pos < len(d.data) {
		switch c := d.data[d.pos]; c {
		case ' ', '\t', '\n', '\r':
			d.pos++
			d.spaced = true
		default:
			return c
		}
	}
	return 0
}

// Spaced reports whether the text read so far had whitespace between or
// around its tokens (not counting whitespace inside strings): text that
// is valid and not spaced is compact, as encoding/json's Compact writes it.
func (d *Decoder) Spaced() bool { return d.spaced }

// Kind returns the kind of the next value without consuming it.
func (d *Decoder) Kind() Kind {
	if d.err != nil {
		return Invalid
	}
	switch c := d.peek(); c {
	case '{':
		return Object
	case '[':
		return Array
	case '"':
		return String
	case 't', 'f':
		return Bool
	case 'n':
		return Null
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return Number
		}
	}
	return Invalid
}

// Finish reports whether only whitespace is left after the document.
func (d *Decoder) Finish() bool {
	if d.err != nil {
		return false
	}
	if d.peek() != 0 || d.pos < len(d.data) {
		return d.unexpected("after the top-level value")
	}
	return true
}

func (d *Decoder) push() bool {
	d.depth++
	if d.depth > MaxDepth {
		return d.fail("nesting deeper than MaxDepth")
	}
	d.pos++
	d.first = true
	return true
}

// BeginObject consumes the '{' of an object; read its members with
// [Decoder.Key] and a value method each.
func (d *Decoder) BeginObject() bool {
	if d.err != nil {
		return false
	}
	if d.peek() != '{' {
		return d.unexpected("where an object was expected")
	}
	return d.push()
}

// Key reads the next key of the current object and the colon after it, and
// returns the unquoted key. It returns false at the object's '}' (which it
// consumes) and on error; [Decoder.Err] tells the two apart.
func (d *Decoder) Key() ([]byte, bool) {
	if !d.member('}') {
		return nil, false
	}
	if d.peek() != '"' {
		d.unexpected("where an object key was expected")
		return nil, false
	}
	key, ok := d.text()
	if !ok {
		return nil, false
	}
	if d.peek() != ':' {
		d.unexpected("after an object key")
		return nil, false
	}
	d.pos++
	return key, true
}

// BeginArray consumes the '[' of an array; read its elements with
// [Decoder.More] and a value method each.
func (d *Decoder) BeginArray() bool {
	if d.err != nil {
		return false
	}
	if d.peek() != '[' {
		return d.unexpected("where an array was expected")
	}
	return d.push()
}

// More reports whether the current array has another element, consuming the
// comma before it, or its ']' when it has none. It returns false on error
// too; [Decoder.Err] tells the two apart.
func (d *Decoder) More() bool {
	return d.member(']')
}

// member moves to the next member of the current object or array (closing
// byte end): past the comma before it, or past end when there is none.
func (d *Decoder) member(end byte) bool {
	if d.err != nil {
		return false
	}
	c := d.peek()
	first := d.first
	d.first = false
	switch {
	case c == end:
		d.pos++
		d.depth--
		return false
	case first:
		return true
	case c == ',':
		d.pos++
		return true
	}
	return d.unexpected("after a member of an object or array")
}

// ArrayLen returns the number of elements of the array that is the next
// value, without consuming it, or 0 if the next value is not an array. It
// is for sizing a slice before reading the elements: it does not validate,
// and on text that is not JSON its count is only a guess.
func (d *Decoder) ArrayLen() int {
	if d.err != nil || d.peek() != '[' {
		return 0
	}
	data := d.data
	depth, n := 0, 0
	element := false // the current element of the array has begun
	for i := d.pos; i < len(data); i++ {
		switch data[i] {
		case '"':
			i = stringEnd(data, i+1)
			element = true
		case '[', '{':
			depth++
			element = depth > 1
		case ']', '}':
			depth--
			if depth == 0 {
				if element {
					n++
				}
				return n
			}
		case ',':
			if depth == 1 {
				n++
				element = false
			}
		case ' ', '\t', '\n', '\r':
		default:
			element = true
		}
	}
	return n
}

// stringEnd returns the index of the quote that ends the string whose
// content starts at i, or len(data).
func stringEnd(data []byte, i int) int {
	for {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return len(data)
		}
		i += q
		// The quote is escaped if an odd number of backslashes precede it.
		b := i
		for b > 0 && data[b-1] == '\\' {
			b--
		}
		if (i-b)%2 == 0 {
			return i
		}
		i++
	}
}

// Null consumes a null and reports true if the next value is one.
func (d *Decoder) Null() bool {
	if d.err != nil || d.peek() != 'n' {
		return false
	}
	return d.literal("null")
}

// Bool reads true or false.
func (d *Decoder) Bool() (v, ok bool) {
	if d.err != nil {
		return false, false
	}
	switch d.peek() {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	}
	return false, d.unexpected("where a boolean was expected")
}

func (d *Decoder) literal(lit string) bool {
	if len(d.data)-d.pos >= len(lit) && string(d.data[d.pos:d.pos+len(lit)]) == lit {
		d.pos += len(lit)
		return true
	}
	for i := 0; i < len(lit) && d.pos < len(d.data) && d.data[d.pos] == lit[i]; i++ {
		d.pos++
	}
	return d.unexpected("in a literal")
}

// Text reads a string and returns it unquoted.
func (d *Decoder) Text() ([]byte, bool) {
	if d.err != nil {
		return nil, false
	}
	if d.peek() != '"' {
		d.unexpected("where a string was expected")
		return nil, false
	}
	return d.text()
}

// TextAt is Text that also says where the string stands in the data: at
// is the offset of its first byte when the bytes returned are the data's
// own (the string has no escapes and is valid UTF-8), so that a caller
// holding the data as a string can take a substring instead of a copy; it
// is -1 when they were unquoted into the decoder's buffer.
func (d *Decoder) TextAt() (s []byte, at int, ok bool) {
	s, ok = d.Text()
	if !ok || d.copied {
		return s, -1, ok
	}
	return s, d.pos - 1 - len(s), true
}

// plain marks the bytes that stand for themselves in a string: not '"',
// '\\', a control character, or the start of a multi-byte UTF-8 sequence.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// text reads the string at d.pos (its opening quote).
func (d *Decoder) text() ([]byte, bool) {
	start := d.pos + 1
	i := start
	data := d.data
	high := -1 // the first byte of a multi-byte sequence, if any
	for i < len(data) {
		c := data[i]
		if plain[c] {
			i++
			continue
		}
		if c == '"' {
			s := data[start:i]
			if high < 0 || utf8.Valid(s) {
				d.pos = i + 1
				d.copied = false
				return s, true
			}
			break
		}
		if c < utf8.RuneSelf {
			break // an escape or a control character
		}
		if high < 0 {
			high = i
		}
		i++
	}
	if high >= 0 {
		i = high // the bytes from here on need checking
	}
	return d.unquote(start, i)
}

// unquote reads the rest of a string whose bytes from start to i are plain
// ASCII, decoding escapes and replacing invalid UTF-8 as encoding/json does.
func (d *Decoder) unquote(start, i int) ([]byte, bool) {
	data := d.data
	b := append(d.buf[:0], data[start:i]...)
	for {
		if i >= len(data) {
			d.pos = i
			d.unexpected("in a string")
			return nil, false
		}
		c := data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			d.buf = b
			d.copied = true
			return b, true
		case c == '\\':
			if i+1 >= len(data) {
				d.pos = len(data)
				d.unexpected("in a string escape")
				return nil, false
			}
			switch e := data[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(data[i+2:])
				if r < 0 {
					d.pos = i + 2
					d.fail("invalid \\u escape")
					return nil, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// A pair takes the next escape; anything else leaves
					// U+FFFD and is read on its own.
					if len(data)-i >= 6 && data[i] == '\\' && data[i+1] == 'u' {
						if r2 := hex4(data[i+2:]); r2 >= 0 {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								b = utf8.AppendRune(b, dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				d.pos = i + 1
				d.fail("invalid escape in a string")
				return nil, false
			}
			i += 2
		case c < 0x20:
			d.pos = i
			d.fail("control character in a string")
			return nil, false
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			b = utf8.AppendRune(b, r) // RuneError for invalid UTF-8
			i += size
		}
	}
}

// hex4 returns the value of four hex digits at the start of s, or -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// Number reads a number and returns its text.
func (d *Decoder) Number() ([]byte, bool) {
	if d.err != nil {
		return nil, false
	}
	d.peek()
	start := d.pos
	if !d.number() {
		return nil, false
	}
	return d.data[start:d.pos], true
}

// number consumes -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (d *Decoder) number() bool {
	data, i := d.data, d.pos
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && '1' <= data[i] && data[i] <= '9':
		i = digits(data, i)
	default:
		d.pos = i
		return d.unexpected("in a number")
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			d.pos = i
			return d.unexpected("after a decimal point")
		}
		i = digits(data, i)
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			d.pos = i
			return d.unexpected("in an exponent")
		}
		i = digits(data, i)
	}
	d.pos = i
	return true
}

func digits(data []byte, i int) int {
	for i < len(data) && '0' <= data[i] && data[i] <= '9' {
		i++
	}
	return i
}

// Raw reads any value and returns its text as it stands, without the
// whitespace around it.
func (d *Decoder) Raw() ([]byte, bool) {
	if d.err != nil {
		return nil, false
	}
	d.peek()
	start := d.pos
	if !d.Skip() {
		return nil, false
	}
	return d.data[start:d.pos], true
}

// Skip reads any value and drops it.
func (d *Decoder) Skip() bool {
	if d.err != nil {
		return false
	}
	switch c := d.peek(); c {
	case '{':
		if !d.push() {
			return false
		}
		for {
			if !d.member('}') {
				return d.err == nil
			}
			if d.peek() != '"' {
				return d.unexpected("where an object key was expected")
			}
			if !d.skipString() {
				return false
			}
			if d.peek() != ':' {
				return d.unexpected("after an object key")
			}
			d.pos++
			if !d.Skip() {
				return false
			}
		}
	case '[':
		if !d.push() {
			return false
		}
		for d.More() {
			if !d.Skip() {
				return false
			}
		}
		return d.err == nil
	case '"':
		return d.skipString()
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	default:
		if c != '-' && (c < '0' || c > '9') {
			return d.unexpected("where a value was expected")
		}
		return d.number()
	}
}

// skipString consumes the string at d.pos, checking its escapes.
func (d *Decoder) skipString() bool {
	data := d.data
	i := d.pos + 1
	for i < len(data) {
		c := data[i]
		switch {
		case c >= 0x80 || plain[c]:
			i++
		case c == '"':
			d.pos = i + 1
			return true
		case c == '\\':
			if i+1 < len(data) {
				switch data[i+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					i += 2
					continue
				case 'u':
					if hex4(data[i+2:]) >= 0 {
						i += 6
						continue
					}
				}
			}
			d.pos = i + 1
			return d.fail("invalid escape in a string")
		default:
			d.pos = i
			return d.fail("control character in a string")
		}
	}
	d.pos = i
	return d.unexpected("in a string")
}

// AppendCompact appends src to dst without the whitespace between tokens,
// as encoding/json's Compact does, and reports whether src is one JSON
// value; when it is not, dst comes back unchanged.
func AppendCompact(dst, src []byte) ([]byte, bool) {
	var d Decoder
	d.Reset(src)
	if !d.Skip() || !d.Finish() {
		return dst, false
	}
	inString := false
	start := 0 // of the bytes not yet appended
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			dst = append(dst, src[start:i]...)
			start = i + 1
		}
	}
	return append(dst, src[start:]...), true
}

// FoldsToAny reports whether key equals one of keys case-insensitively, as
// encoding/json matches an object key to a struct field when no field name
// is exact. A decoder that reads its fields by their exact names uses it
// to tell a key encoding/json ignores (skip it) from one encoding/json
// would still decode into a field.
func FoldsToAny(key []byte, keys []string) bool {
	for _, k := range keys {
		if strings.EqualFold(string(key), k) {
			return true
		}
	}
	return false
}
