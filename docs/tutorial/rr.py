"""Round-robin in Python: one FIFO per PCPU, 10 ms turns (Xen 2.0's rrobin, minus placement)."""

from collections import deque

import vmsched


class RoundRobin(vmsched.Scheduler):
    def init(self):
        self.queues = [deque() for _ in range(self.host.npcpus)]

    def wake(self, vcpu):
        pcpu = self.host.processor(vcpu)
        if vcpu not in self.queues[pcpu] and self.host.running_on(vcpu) is None:
            self.queues[pcpu].append(vcpu)
            if self.host.current(pcpu) is None:
                self.host.tickle(pcpu)

    def sleep(self, vcpu):
        if self.host.running_on(vcpu) is not None:
            self.host.tickle(self.host.running_on(vcpu))
        elif vcpu in self.queues[self.host.processor(vcpu)]:
            self.queues[self.host.processor(vcpu)].remove(vcpu)

    def do_schedule(self, pcpu):
        prev = self.host.current(pcpu)
        if prev is not None and self.host.runnable(prev):
            self.queues[pcpu].append(prev)
        if not self.queues[pcpu]:
            return None
        return self.queues[pcpu].popleft(), 10_000_000
