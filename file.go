package agentloop

import (
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"strings"
)

// ErrUnsupportedFile is wrapped by the error a provider returns when a
// history holds a file it cannot send to its model (a media type the API
// does not take, a file where the API takes none, a URL it cannot pass on).
// Providers never drop a file silently; the error is a [*FileError].
var ErrUnsupportedFile = errors.New("agentloop: file not supported")

// ErrInvalidDataURL is wrapped by the error of [ParseDataURL].
var ErrInvalidDataURL = errors.New("agentloop: invalid data: URL")

// FileError reports a file part a provider cannot send. It wraps
// [ErrUnsupportedFile].
type FileError struct {
	// Provider names the provider ("ollama", "openai", "anthropic"…).
	Provider string
	// Message and Part locate the part: indexes into the history and into
	// the message's Parts.
	Message, Part int
	// MediaType and Filename are the file's.
	MediaType, Filename string
	// Reason says what the provider can take instead.
	Reason string
}

// Error returns "<provider>: message <i> part <j>: file "<name>" (<media
// type>) cannot be sent: <reason>".
func (e *FileError) Error() string {
	return fmt.Sprintf("%s: message %d part %d: file %q (%s) cannot be sent: %s",
		e.Provider, e.Message, e.Part, e.Filename, e.MediaType, e.Reason)
}

// Unwrap returns [ErrUnsupportedFile].
func (e *FileError) Unwrap() error { return ErrUnsupportedFile }

// ParseDataURL splits a data: URL (RFC 2397) into its media type (with its
// parameters other than base64; "text/plain;charset=US-ASCII" when the URL
// names none) and its decoded content. Both base64 (standard or URL
// alphabet, padded or not) and percent-encoded payloads are read. Anything
// else is an error wrapping [ErrInvalidDataURL].
func ParseDataURL(s string) (mediaType string, data []byte, err error) {
	rest, ok := cutPrefixFold(s, "data:")
	if !ok {
		return "", nil, fmt.Errorf("%w: it does not start with \"data:\"", ErrInvalidDataURL)
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return "", nil, fmt.Errorf("%w: no comma before the content", ErrInvalidDataURL)
	}
	isBase64 := false
	if m, ok := cutSuffixFold(meta, ";base64"); ok {
		meta, isBase64 = m, true
	}
	switch {
	case meta == "":
		mediaType = "text/plain;charset=US-ASCII"
	case strings.HasPrefix(meta, ";"):
		mediaType = "text/plain" + meta
	default:
		mediaType = meta
	}
	if _, _, err := mime.ParseMediaType(mediaType); err != nil {
		return "", nil, fmt.Errorf("%w: media type %q: %v", ErrInvalidDataURL, mediaType, err)
	}
	if isBase64 {
		data, err = decodeBase64(payload)
		if err != nil {
			return "", nil, fmt.Errorf("%w: the base64 content does not decode: %v", ErrInvalidDataURL, err)
		}
		return mediaType, data, nil
	}
	text, err := url.PathUnescape(payload)
	if err != nil {
		return "", nil, fmt.Errorf("%w: the content does not unescape: %v", ErrInvalidDataURL, err)
	}
	return mediaType, []byte(text), nil
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func cutSuffixFold(s, suffix string) (string, bool) {
	if len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix) {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}

// Inline returns the file's content when the file carries it: Data, or the
// decoded content of a data: URL; ok is false when another URL (http,
// https…) locates the file. A malformed data: URL is an error wrapping
// [ErrInvalidDataURL]. The returned slice may share Data's memory.
func (f *File) Inline() (data []byte, ok bool, err error) {
	if f.URL == "" {
		return f.Data, true, nil
	}
	if _, isData := cutPrefixFold(f.URL, "data:"); !isData {
		return nil, false, nil
	}
	_, data, err = ParseDataURL(f.URL)
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// DataURL returns the file as a base64 data: URL when it carries its
// content: a base64 data: URL as it is, a percent-encoded one re-encoded,
// Data under MediaType. It returns "" when another URL locates the file or
// its data: URL is malformed ([File.Inline] says why).
func (f *File) DataURL() string {
	if f.URL == "" {
		return "data:" + f.MediaType + ";base64," + base64.StdEncoding.EncodeToString(f.Data)
	}
	if _, isData := cutPrefixFold(f.URL, "data:"); !isData {
		return ""
	}
	meta, _, _ := strings.Cut(f.URL, ",")
	mediaType, data, err := ParseDataURL(f.URL)
	switch {
	case err != nil:
		return ""
	case len(meta) >= 7 && strings.EqualFold(meta[len(meta)-7:], ";base64"):
		return f.URL
	}
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)
}
