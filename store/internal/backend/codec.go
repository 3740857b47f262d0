package backend

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// EncodeHistory returns the bytes stored for the chat's history.
func EncodeHistory(chatID string, h agentloop.History) ([]byte, error) {
	data, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("%w: chat %q: the history does not encode: %w", store.ErrInvalid, chatID, err)
	}
	return data, nil
}

// DecodeHistory decodes the stored history of the chat; data that does not
// decode is a [*store.CorruptError].
func DecodeHistory(chatID string, version int64, data []byte) (agentloop.History, error) {
	var h agentloop.History
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, &store.CorruptError{ChatID: chatID, Version: version, Err: err}
	}
	return h, nil
}

// Micro returns t in UTC, truncated to the microsecond: the precision every
// backend keeps.
func Micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// A list cursor is, in unpadded base64url: the format byte cursorFormat,
// the updated time in Unix microseconds (8 bytes, big-endian), the chat id,
// and the CRC-32C of all that (4 bytes). The checksum makes a cursor the
// store did not make (typed, cut, altered) an error, rather than a page
// that starts anywhere, on every backend alike.
const cursorFormat = 1

var cursorTable = crc32.MakeTable(crc32.Castagnoli)

// EncodeCursor returns the cursor of a chat list page that ends with the
// chat id, updated at the given time.
func EncodeCursor(updated time.Time, id string) string {
	b := binary.BigEndian.AppendUint64([]byte{cursorFormat}, uint64(updated.UnixMicro()))
	b = append(b, id...)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, cursorTable))
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor decodes a cursor made by EncodeCursor; anything else is an
// error wrapping [store.ErrInvalid].
func DecodeCursor(cursor string) (updated time.Time, id string, err error) {
	invalid := fmt.Errorf("%w: list cursor %q was not made by this store", store.ErrInvalid, cursor)
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) < 1+8+1+4 || b[0] != cursorFormat {
		return time.Time{}, "", invalid
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, cursorTable) != sum {
		return time.Time{}, "", invalid
	}
	updated = time.UnixMicro(int64(binary.BigEndian.Uint64(body[1:9]))).UTC()
	id = string(body[9:])
	if y := updated.Year(); y < 1 || y > 9999 || store.CheckID("chat id", id) != nil {
		return time.Time{}, "", invalid
	}
	return updated, id, nil
}

// RandomID returns 128 random bits in hex, for stream ids and lease tokens.
func RandomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
