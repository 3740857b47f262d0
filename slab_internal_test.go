package agentloop

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type boxItem interface{ isBoxItem() }

type boxText struct{ Text string }

func (boxText) isBoxItem() {}

type boxTagged struct {
	ID   string
	Tags []string
	N    int
	In   boxItem
}

func (boxTagged) isBoxItem() {}

type boxPtr struct{ p *int }

func (boxPtr) isBoxItem() {}

// A boxed value is the value a conversion makes: same dynamic type, equal
// under ==, the same to a type switch and to reflect, and it stays so
// through garbage collections while later values fill the batch.
func TestSlab_IsTheValueAConversionMakes(t *testing.T) {
	s := newSlab[boxItem, boxText]()
	var boxed, converted []boxItem
	for i := range 3 * maxBatch {
		v := boxText{Text: fmt.Sprint("delta ", i)}
		boxed = append(boxed, s.box(v))
		converted = append(converted, boxItem(v))
		if i%50 == 0 {
			runtime.GC()
		}
	}
	runtime.GC()
	for i := range boxed {
		require.Equal(t, converted[i], boxed[i])
		require.True(t, boxed[i] == converted[i], "== differs at %d", i)
		v, ok := boxed[i].(boxText)
		require.True(t, ok)
		assert.Equal(t, fmt.Sprint("delta ", i), v.Text)
		assert.Equal(t, reflect.TypeFor[boxText](), reflect.TypeOf(boxed[i]))
	}
}

// Values with pointers and interfaces inside (the garbage collector must
// see them through the batch) come back whole.
func TestSlab_KeepsWhatTheValuesPointTo(t *testing.T) {
	s := newSlab[boxItem, boxTagged]()
	var boxed []boxItem
	for i := range 200 {
		boxed = append(boxed, s.box(boxTagged{ID: fmt.Sprint(i), Tags: []string{fmt.Sprint("t", i)}, N: i, In: boxText{Text: fmt.Sprint("in", i)}}))
	}
	runtime.GC()
	runtime.GC()
	for i, b := range boxed {
		want := boxTagged{ID: fmt.Sprint(i), Tags: []string{fmt.Sprint("t", i)}, N: i, In: boxText{Text: fmt.Sprint("in", i)}}
		assert.Equal(t, want, b.(boxTagged))
	}
}

// Batches grow from 4 values to maxBatch: a few values cost a few
// allocations, many cost one per maxBatch.
func TestSlab_AllocatesPerBatch(t *testing.T) {
	allocs := testing.AllocsPerRun(10, func() {
		s := newSlab[boxItem, boxText]()
		for range 1000 {
			_ = s.box(boxText{Text: "x"})
		}
	})
	// 4+8+16+32 = 60 values in 4 batches, then ceil(940/64) = 15; plus the Slab.
	assert.LessOrEqual(t, allocs, 21.0)
}

func TestNewSlab_RefusesPointerShapedTypes(t *testing.T) {
	assert.Panics(t, func() { newSlab[boxItem, boxPtr]() })
	assert.Panics(t, func() { newSlab[any, *int]() })
	assert.Panics(t, func() { newSlab[any, struct{ p *int }]() })
	assert.Panics(t, func() { newSlab[any, [1]map[string]int]() })
	assert.NotPanics(t, func() { newSlab[any, struct{ a, b *int }]() })
	assert.NotPanics(t, func() { newSlab[any, string]() })
}

func TestNewSlab_RefusesATypeThatDoesNotImplementTheInterface(t *testing.T) {
	assert.Panics(t, func() { newSlab[boxItem, string]() })
}
