package backend

import (
	"testing"
)

func TestNotifyWakesTheWaitersOfItsKeyOnly(t *testing.T) {
	var h Hub
	a1, releaseA1 := h.Wait("a")
	a2, releaseA2 := h.Wait("a")
	b, releaseB := h.Wait("b")
	defer releaseA1()
	defer releaseA2()
	defer releaseB()
	h.Notify("a")
	<-a1
	<-a2
	select {
	case <-b:
		t.Fatal("b was woken by a's notification")
	default:
	}
	again, release := h.Wait("a")
	defer release()
	select {
	case <-again:
		t.Fatal("a wait taken after the notification was woken by it")
	default:
	}
}

func TestReleasedWaitsLeaveNothingBehind(t *testing.T) {
	var h Hub
	_, r1 := h.Wait("a")
	_, r2 := h.Wait("a")
	r1()
	r1() // twice is once
	if h.Len() != 1 {
		t.Fatalf("Len = %d with one waiter left, want 1", h.Len())
	}
	r2()
	if h.Len() != 0 {
		t.Fatalf("Len = %d with no waiter left, want 0", h.Len())
	}
}

func TestCloseWakesEveryWaiterAndLaterWaits(t *testing.T) {
	var h Hub
	a, ra := h.Wait("a")
	defer ra()
	h.Close()
	<-a
	later, rl := h.Wait("b")
	defer rl()
	<-later
}
