package backend

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
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

// EncodeCursor returns the cursor of a chat list page that ends with the
// chat id, updated at the given time.
func EncodeCursor(updated time.Time, id string) string {
	b := binary.BigEndian.AppendUint64(nil, uint64(updated.UnixMicro()))
	return base64.RawURLEncoding.EncodeToString(append(b, id...))
}

// DecodeCursor decodes a cursor made by EncodeCursor; anything else is an
// error wrapping [store.ErrInvalid].
func DecodeCursor(cursor string) (updated time.Time, id string, err error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) < 9 {
		return time.Time{}, "", fmt.Errorf("%w: list cursor %q was not made by this store", store.ErrInvalid, cursor)
	}
	id = string(b[8:])
	if err := store.CheckID("chat id", id); err != nil {
		return time.Time{}, "", fmt.Errorf("%w: list cursor %q was not made by this store", store.ErrInvalid, cursor)
	}
	return time.UnixMicro(int64(binary.BigEndian.Uint64(b))).UTC(), id, nil
}

// RandomID returns 128 random bits in hex, for stream ids and lease tokens.
func RandomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
