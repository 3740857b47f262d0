package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A bad flag's error is printed once, by the flag package with the usage,
// and exits 2; -help exits 0; other errors are printed by exitCode.
func TestExitCode_ABadFlagPrintsItsErrorOnce(t *testing.T) {
	var stderr, exitOut bytes.Buffer
	err := run(context.Background(), []string{"-bogus"}, &stderr, nil)
	assert.Equal(t, 2, exitCode(err, &exitOut))
	all := stderr.String() + exitOut.String()
	assert.Equal(t, 1, strings.Count(all, "flag provided but not defined: -bogus"), all)
	assert.Contains(t, stderr.String(), "-addr", "with the usage")

	assert.Equal(t, 0, exitCode(flag.ErrHelp, io.Discard))
	exitOut.Reset()
	assert.Equal(t, 1, exitCode(errors.New("boom"), &exitOut))
	assert.Equal(t, "webchat: boom\n", exitOut.String())
}
