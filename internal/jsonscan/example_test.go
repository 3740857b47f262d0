package jsonscan_test

import (
	"fmt"

	"github.com/agentloop/agentloop/internal/jsonscan"
)

// A Decoder reads a known shape in one pass: here a user's name and the
// raw text of everything else.
func Example() {
	var d jsonscan.Decoder
	d.Reset([]byte(`{"name": "Ada \u2764", "langs": ["en", "fr"], "age": 36}`))
	if !d.BeginObject() {
		fmt.Println(d.Err())
		return
	}
	for {
		key, ok := d.Key()
		if !ok {
			break
		}
		switch string(key) {
		case "name":
			name, _ := d.Text()
			fmt.Printf("name: %s\n", name)
		default:
			k := string(key) // key is only valid until the next call
			raw, _ := d.Raw()
			fmt.Printf("%s: %s\n", k, raw)
		}
	}
	if !d.Finish() {
		fmt.Println(d.Err())
	}
	// Output:
	// name: Ada ❤
	// langs: ["en", "fr"]
	// age: 36
}
