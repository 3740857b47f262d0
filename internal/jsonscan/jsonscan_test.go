package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodeAny reads one value the way encoding/json decodes into an any with
// UseNumber: objects as maps (the last of duplicate keys wins), arrays as
// slices, numbers as json.Number.
func decodeAny(d *Decoder) (any, bool) {
	switch d.Kind() {
	case Object:
		if !d.BeginObject() {
			return nil, false
		}
		m := map[string]any{}
		for {
			k, ok := d.Key()
			if !ok {
				return m, d.Err() == nil
			}
			key := string(k)
			v, ok := decodeAny(d)
			if !ok {
				return nil, false
			}
			m[key] = v
		}
	case Array:
		if !d.BeginArray() {
			return nil, false
		}
		s := []any{}
		for d.More() {
			v, ok := decodeAny(d)
			if !ok {
				return nil, false
			}
			s = append(s, v)
		}
		return s, d.Err() == nil
	case String:
		s, ok := d.Text()
		return string(s), ok
	case Number:
		n, ok := d.Number()
		return json.Number(n), ok
	case Bool:
		return d.Bool()
	case Null:
		return nil, d.Null()
	}
	_, ok := d.Raw()
	return nil, ok
}

func stdDecode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if json.Unmarshal(data, new(json.RawMessage)) != nil {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

// check asserts that the Decoder accepts exactly what encoding/json accepts
// and reads the same values and raw text from it.
func check(t *testing.T, data []byte) {
	t.Helper()
	valid := json.Valid(data)
	var compact bytes.Buffer
	compactErr := json.Compact(&compact, data)
	if got, ok := AppendCompact([]byte("x"), data); ok != (compactErr == nil) || ok && string(got) != "x"+compact.String() || !ok && string(got) != "x" {
		t.Fatalf("AppendCompact(%q) = %q, %v; json.Compact gives %q, %v", data, got, ok, compact.String(), compactErr)
	}
	var d Decoder
	d.Reset(data)
	if d.Skip() && d.Finish() != valid {
		t.Fatalf("Skip+Finish accepts %q; json.Valid says %v", data, valid)
	}
	if !valid {
		if d.Err() == nil {
			t.Fatalf("no error for %q", data)
		}
		var se *SyntaxError
		if !errors.As(d.Err(), &se) || se.Offset < 0 || se.Offset > len(data) {
			t.Fatalf("error %v for %q, want a *SyntaxError with an offset in the text", d.Err(), data)
		}
		return
	}
	if d.Spaced() != (compact.String() != string(data)) {
		t.Fatalf("Spaced() = %v for %q", d.Spaced(), data)
	}
	d.Reset(data)
	raw, ok := d.Raw()
	if !ok || !d.Finish() || string(raw) != string(bytes.Trim(data, " \t\r\n")) {
		t.Fatalf("Raw(%q) = %q, %v (%v)", data, raw, ok, d.Err())
	}
	want, err := stdDecode(data)
	if err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	d.Reset(data)
	if s, isArray := want.([]any); isArray && d.ArrayLen() != len(s) {
		t.Fatalf("ArrayLen(%q) = %d, want %d", data, d.ArrayLen(), len(s))
	}
	if _, isArray := want.([]any); !isArray && d.ArrayLen() != 0 {
		t.Fatalf("ArrayLen(%q) = %d for a value that is no array", data, d.ArrayLen())
	}
	got, ok := decodeAny(&d)
	if !ok || !d.Finish() {
		t.Fatalf("decoding %q: %v", data, d.Err())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("decoding %q (-encoding/json +Decoder):\n%s", data, diff)
	}
}

var seeds = []string{
	`{"a":1,"b":[true,false,null],"c":{"d":"e\n\u00e9\ud83d\ude00"}}`,
	`  [ 1 , -0.5e+10 , 0 , "x" ]  `, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`, `"\ud83d\ude00\ud83d"`,
	"\"\xff\xfe ok \xe2\x82\"", "\"tab\there\"", `"\/\b\f\r\t\\\""`, `"\x"`, `"\u12"`, `"\u12G4"`,
	`{"a":1,}`, `[1,]`, `[,1]`, `{"a" 1}`, `{"a":}`, `{1:2}`, `[1 2]`, `01`, `-`, `1.`, `1e`, `1e+`, `.5`,
	`tru`, `nul`, `falsey`, `{}x`, `{"a":1}{}`, ``, ` `, `{`, `[`, `"`, `{"a":"b"`, `{"a":1,"a":2}`,
	"\"a\x01b\"", " {\"a\" : [ 1 , \"b c\\\" d\" ] }\n", "\t\"\\\\\" ", `{"\u0061":1}`, `[[[]]]`, `[ "a\\\"]" , {"b":[1,2]} , [] ]`, `["\\\\",1]`, `1E400`, `123456789012345678901234567890`,
}

// design.md §19.2: the Decoder accepts and reads what encoding/json does.
func TestDecoder_AgreesWithEncodingJSON(t *testing.T) {
	for _, s := range seeds {
		check(t, []byte(s))
	}
}

func TestDecoder_DepthAsEncodingJSON(t *testing.T) {
	for _, n := range []int{MaxDepth, MaxDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			closeBy := map[string]string{"[": "]", `{"a":`: "}"}[open]
			data := []byte(strings.Repeat(open, n) + "1" + strings.Repeat(closeBy, n))
			var d Decoder
			d.Reset(data)
			if valid := json.Valid(data); (d.Skip() && d.Finish()) != valid {
				t.Errorf("%d levels of %s: Skip+Finish = %v (%v), json.Valid = %v", n, open, !valid, d.Err(), valid)
			}
		}
	}
}

func TestDecoder_StaysFailed(t *testing.T) {
	var d Decoder
	d.Reset([]byte(`{"a":x}`))
	if !d.BeginObject() {
		t.Fatal(d.Err())
	}
	if _, ok := d.Key(); !ok {
		t.Fatal(d.Err())
	}
	if _, ok := d.Text(); ok || d.Err() == nil {
		t.Fatal("read a string from x")
	}
	first := d.Err()
	if d.Skip() || d.Null() || d.Finish() || d.Kind() != Invalid || d.Err() != first {
		t.Fatalf("a failed Decoder went on: %v", d.Err())
	}
}

// design.md §19.2: the Decoder and encoding/json agree on any input.
func FuzzDecoder(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		check(t, data)
	})
}

func TestFoldsToAny_MatchesAKeyAsEncodingJSONMatchesAField(t *testing.T) {
	keys := []string{"toolCallId", "id"}
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"toolCallId", true},
		{"TOOLCALLID", true},
		{"toolcallid", true},
		{"ID", true},
		{"toolCall", false},
		{"ids", false},
		{"", false},
	} {
		// The reference: does encoding/json decode the key into a field?
		var v struct {
			ToolCallID string `json:"toolCallId"`
			ID         string `json:"id"`
		}
		_ = json.Unmarshal([]byte(`{"`+tc.key+`":"x"}`), &v)
		if decoded := v.ToolCallID != "" || v.ID != ""; decoded != tc.want {
			t.Fatalf("test table is wrong for %q: encoding/json decodes it: %v", tc.key, decoded)
		}
		if got := FoldsToAny([]byte(tc.key), keys); got != tc.want {
			t.Errorf("FoldsToAny(%q) = %v; want %v", tc.key, got, tc.want)
		}
	}
}

func TestDecoder_TextAtGivesTheOffsetOfAStringWithoutEscapes(t *testing.T) {
	data := []byte(`["plain", "caf\u00e9", "é", "a\nb", "bad` + "\xff" + `"]`)
	var d Decoder
	d.Reset(data)
	if !d.BeginArray() {
		t.Fatal(d.Err())
	}
	type got struct {
		Text string
		At   int
	}
	var all []got
	for d.More() {
		s, at, ok := d.TextAt()
		if !ok {
			t.Fatal(d.Err())
		}
		if at >= 0 && string(data[at:at+len(s)]) != string(s) {
			t.Errorf("TextAt(%q) = %d, where the data holds %q", s, at, data[at:at+len(s)])
		}
		all = append(all, got{string(s), at})
	}
	want := []got{{"plain", 2}, {"café", -1}, {"é", 24}, {"a\nb", -1}, {"bad\ufffd", -1}}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Error(diff)
	}
}
