"""Weighted round-robin: one FIFO per PCPU, turns of 10 ms x weight / 256, optional caps."""

from collections import deque

import vmsched

PERIOD_NS = 10_000_000  # turn of a weight-256 VCPU, and the period caps are counted in


class WeightedRR(vmsched.Scheduler):
    """Weighted round-robin with caps: per-PCPU FIFO, turns in proportion to weights."""

    title = "Weighted RR"
    params = {
        "weight": vmsched.Param(256, min=1, max=65535, doc="Relative length of a turn"),
        "cap": vmsched.Param(0, unit="%", min=0, max=100, doc="Most CPU per 10 ms (0: none)"),
    }
    allocation = {"rule": "cap = A", "domain": [{"name": "cap", "unit": "%", "share_of": 100}]}

    def init(self):
        n = self.host.nvcpus
        self.queues = [deque() for _ in range(self.host.npcpus)]
        self.load = [0] * self.host.npcpus
        self.turn, self.budget, self.left = [PERIOD_NS] * n, [None] * n, [None] * n
        self.since = [0] * self.host.npcpus
        self.host.arm_timer(0, PERIOD_NS, 0)

    def init_domain(self, dom, params):
        for v in self.host.vcpus_of(dom):
            self.turn[v] = PERIOD_NS * params["weight"] // 256
            self.budget[v] = self.left[v] = PERIOD_NS * params["cap"] // 100 or None

    adjust = init_domain

    def insert_vcpu(self, vcpu):
        pcpu = min(self.host.hard_affinity(vcpu), key=lambda p: self.load[p])
        self.load[pcpu] += 1
        self.host.set_processor(vcpu, pcpu)

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

    def timer(self, id):  # a new period: budgets back, every PCPU decides again
        now = self.host.now()
        self.left = list(self.budget)
        self.since = [now] * self.host.npcpus
        self.host.arm_timer(0, now + PERIOD_NS, 0)
        for pcpu in range(self.host.npcpus):
            self.host.tickle(pcpu)

    def do_schedule(self, pcpu):
        now, prev, queue = self.host.now(), self.host.current(pcpu), self.queues[pcpu]
        if prev is not None:
            if self.left[prev] is not None:
                self.left[prev] -= now - self.since[pcpu]
            if self.host.runnable(prev):
                queue.append(prev)
        self.since[pcpu] = now
        for _ in range(len(queue)):
            vcpu = queue.popleft()
            if self.left[vcpu] is None or self.left[vcpu] > 0:
                return vcpu, min(self.turn[vcpu], self.left[vcpu] or self.turn[vcpu])
            queue.append(vcpu)  # out of budget until the next period
        return None
