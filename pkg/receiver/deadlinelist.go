/*
Copyright 2026 The pdtopo Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package receiver

// deadlineList is an intrusive FIFO of rooms that share one timeout. Because
// every room in a list got its deadline as "now + the same duration", the
// list is ordered by deadline: expiring rooms is popping the head, and
// forgetting a room is an O(1) unlink. Memory is exactly the rooms in it.
type deadlineList struct {
	head, tail *roomEntry
	timeout    int64 // nanoseconds added to "now" on push
	reason     FailureReason
}

// push appends e with deadline now+timeout, unlinking it from any list first.
func (l *deadlineList) push(e *roomEntry, now int64) {
	if e.list != nil {
		e.list.unlink(e)
	}
	e.deadline, e.list = now+l.timeout, l
	e.prev, e.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = e
	} else {
		l.head = e
	}
	l.tail = e
}

// unlink removes e from l; e must be in l.
func (l *deadlineList) unlink(e *roomEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next, e.list = nil, nil, nil
}

// expired pops the first room whose deadline is at or before now, or nil.
func (l *deadlineList) expired(now int64) *roomEntry {
	e := l.head
	if e == nil || e.deadline > now {
		return nil
	}
	l.unlink(e)
	return e
}
