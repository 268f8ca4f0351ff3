// Package eventqueue is the event queue of headroom's discrete-event
// simulations — package sim and the adaptivetest model: a binary min-heap
// of events, earliest first, in which each event type says which of two
// comes first (Event.Before).
//
// A simulation's output depends on the order in which events that Before
// leaves unordered (a tie) come out, so the queue sifts exactly as
// container/heap does: the same Before gives the same order as a
// container/heap of the same events. It moves the events themselves rather
// than boxing each in an interface, so that Push and Pop allocate nothing
// once the queue has grown to its working size.
package eventqueue
