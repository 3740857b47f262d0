// Package sse reads a Server-Sent Events stream (the text/event-stream
// format of the WHATWG HTML standard): the LLM providers' streams, and the
// AI SDK UI message streams that aisdk/aisdktest checks.
//
// It handles the event and data fields, several data lines in one event
// (joined with "\n"), LF, CRLF and lone CR line ends, comment lines (":" ...),
// fields with or without a space after the colon, and ignores id, retry and
// unknown fields. Unlike a browser it also delivers an event that the stream
// ends without a blank line after, since some servers omit it; such an
// event is marked [Event.Unterminated], for readers that must behave like
// a browser (which drops it).
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxEventSize bounds the data of one event unless
// [Reader.MaxEventSize] says otherwise.
const DefaultMaxEventSize = 8 << 20

// ErrEventTooLarge is returned (wrapped) when an event's line or data exceeds
// the reader's bound.
var ErrEventTooLarge = errors.New("sse: event too large")

// Event is one dispatched event. Its slices and strings are only valid until
// the next call to [Reader.Next].
type Event struct {
	// Name is the event field ("" when the event had none; the standard
	// calls that "message").
	Name string
	// Data is the data fields' values joined with "\n".
	Data []byte
	// Unterminated is true for the last event of a stream that ended
	// before the blank line that dispatches it. A browser's EventSource,
	// and the AI SDK client's parser, drop such an event.
	Unterminated bool
}

// Reader reads events from an io.Reader. It is not safe for concurrent use.
type Reader struct {
	// MaxEventSize bounds one line and one event's data, in bytes; 0 means
	// DefaultMaxEventSize.
	MaxEventSize int

	r       *bufio.Reader
	line    []byte // a line longer than the bufio buffer, assembled
	data    []byte
	name    []byte
	hasData bool
	lastStr string // interned event name, to avoid one string per event
	rest    []byte // what follows a lone CR in the current raw line
	inRest  bool
	err     error
}

// NewReader returns a Reader that reads from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 16<<10)}
}

func (r *Reader) max() int {
	if r.MaxEventSize > 0 {
		return r.MaxEventSize
	}
	return DefaultMaxEventSize
}

// Next returns the next event with data. It returns io.EOF when the stream
// ends cleanly, io.ErrUnexpectedEOF never (a final event without its blank
// line is delivered), and any other read error as it is. After an error,
// Next keeps returning it.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	r.data = r.data[:0]
	r.name = r.name[:0]
	r.hasData = false
	for {
		line, err := r.nextLine()
		if err != nil {
			if err == io.EOF && r.hasData {
				r.err = io.EOF
				ev := r.event()
				ev.Unterminated = true
				return ev, nil
			}
			r.err = err
			return Event{}, err
		}
		if len(line) == 0 {
			if r.hasData {
				return r.event(), nil
			}
			r.name = r.name[:0]
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if r.hasData {
				r.data = append(r.data, '\n')
			}
			r.data = append(r.data, value...)
			r.hasData = true
			if len(r.data) > r.max() {
				r.err = fmt.Errorf("%w: data exceeds %d bytes", ErrEventTooLarge, r.max())
				return Event{}, r.err
			}
		case "event":
			r.name = append(r.name[:0], value...)
		}
	}
}

func (r *Reader) event() Event {
	if string(r.name) != r.lastStr {
		r.lastStr = string(r.name)
	}
	return Event{Name: r.lastStr, Data: r.data}
}

// nextLine returns the next line, ended by LF, CRLF or a lone CR, without
// its line end. The slice is valid until the next call.
func (r *Reader) nextLine() ([]byte, error) {
	src := r.rest
	if !r.inRest {
		raw, err := r.readLine()
		if err != nil {
			return nil, err
		}
		src = raw
	}
	line, rest, found := bytes.Cut(src, []byte{'\r'})
	r.rest, r.inRest = rest, found && len(rest) > 0
	return line, nil
}

// readLine returns the next LF-ended line without its LF. The slice is
// valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		chunk, err := r.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			r.line = append(r.line, chunk...)
			if len(r.line) > r.max() {
				return nil, fmt.Errorf("%w: line exceeds %d bytes", ErrEventTooLarge, r.max())
			}
			continue
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		line := chunk
		if len(r.line) > 0 {
			r.line = append(r.line, chunk...)
			line = r.line
		}
		if err == io.EOF && len(line) == 0 {
			return nil, io.EOF
		}
		return bytes.TrimSuffix(line, []byte("\n")), nil
	}
}
