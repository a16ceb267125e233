"""The terminal screen of `vmsched top` (Textual).

Every TICK_S of wall time the app works out how far the simulation should
have got (`speed` simulated seconds per wall second since the last time the
pace was set) and advances it there, sample by sample, spending at most
TICK_BUDGET_S of wall time per tick so that keys stay responsive. The
simulation object must stay on the thread that made it, so it runs here, in
the event loop, in slices, rather than in a worker thread.
"""

from __future__ import annotations

import math
import time

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.suggester import SuggestFromList
from textual.widgets import Footer, Input, Static

from vmsched.errors import InternalError, ScenarioError, unknown_name
from vmsched.monitor.model import Monitor, parse_changes, sort_keys
from vmsched.monitor.text import (
    VCPU_COLUMNS,
    header_lines,
    screen_cells,
    screen_columns,
    speed_label,
    vcpu_cells,
)

#: Wall seconds between two checks of the pace (and redraws at most).
TICK_S = 0.05
#: Wall seconds of simulating per tick, at most.
TICK_BUDGET_S = 0.04

#: The speeds `+` and `-` step through (simulated seconds per wall second).
SPEEDS = (1.0, 10.0, 100.0, math.inf)

STATE_STYLES = {"running": "green", "runnable": "yellow", "blocked": "dim", "offline": "red"}


class TopApp(App[int]):
    """xentop for a simulation: header, domain table, VCPU bars, a prompt."""

    TITLE = "vmsched top"
    CSS = """
    #header { height: auto; padding: 0 1; }
    #message { height: 1; padding: 0 1; }
    #body { height: 1fr; }
    #domains, #vcpus { padding: 0 1; height: auto; }
    #vcpus { margin-top: 1; }
    #prompt { display: none; dock: bottom; margin-bottom: 1; }
    """
    BINDINGS = [
        Binding("q", "quit", "quit"),
        Binding("space,p", "toggle_pause", "pause/resume"),
        Binding("plus,equals_sign", "faster", "faster"),
        Binding("minus", "slower", "slower"),
        Binding("n", "step", "step (paused)"),
        Binding("s", "sort", "sort"),
        Binding("w", "weight", "weight"),
        Binding("a", "adjust", "xl sched-*"),
        Binding("escape", "cancel", "cancel", show=False),
    ]

    def __init__(self, monitor: Monitor, speed: float = 1.0) -> None:
        super().__init__()
        self.monitor = monitor
        self.speed = speed
        self.paused = False
        #: Index into sort_keys(frame).
        self.sort_index = 0
        #: Simulating as fast as it can, slower than `speed`.
        self.behind = False
        #: The open prompt: (what, domain) with what "weight" or "adjust";
        #: domain is None while the prompt asks for it.
        self.prompt: tuple[str, str | None] | None = None
        #: The last message line (an error starts with "error: ").
        self.message = ""
        #: What stopped the simulation, if it failed (a bug): the app exits
        #: and the command reports it.
        self.failure: InternalError | None = None
        self._set_pace()

    # ------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Static(id="message")
        with VerticalScroll(id="body"):
            yield Static(id="domains")
            yield Static(id="vcpus")
        yield Input(id="prompt")
        yield Footer()

    def on_mount(self) -> None:
        self._redraw()
        self.set_interval(TICK_S, self._tick)

    # ------------------------------------------------------------ pacing

    def _set_pace(self) -> None:
        """From now on, simulated time runs `speed` times wall time from here."""
        #: When the pace was last set (wall clock, perf_counter) and where
        #: the simulation stood then.
        self.pace_wall = time.perf_counter()
        self.pace_sim_ns = self.monitor.now_ns

    def target_ns(self) -> float:
        """Where the simulation should be by now."""
        if math.isinf(self.speed):
            return math.inf
        elapsed = time.perf_counter() - self.pace_wall
        return self.pace_sim_ns + elapsed * self.speed * 1e9

    def _fail(self, exc: InternalError) -> None:
        self.failure = exc
        self.exit(return_code=1)

    def _tick(self) -> None:
        if self.paused or self.monitor.finished:
            return
        try:
            self._advance_to_pace()
        except InternalError as exc:
            self._fail(exc)

    def _advance_to_pace(self) -> None:
        deadline = time.perf_counter() + TICK_BUDGET_S
        target = self.target_ns()
        took = False
        m = self.monitor
        while not m.finished:
            if target < m.next_sample_ns:
                m.advance(target)
                break
            took |= m.advance(m.next_sample_ns)
            if time.perf_counter() > deadline:
                break
        # Out of time with samples still due: the simulation cannot keep this
        # pace; go on from where it is rather than race to catch up later.
        behind = not math.isinf(self.speed) and not m.finished and target >= m.next_sample_ns
        if behind:
            self._set_pace()
        if took or behind != self.behind:
            self.behind = behind
            self._redraw()

    # ------------------------------------------------------------ drawing

    def _redraw(self) -> None:
        if not self.query("#header"):
            # The screen is not composed yet, or is being torn down at exit
            # while a tick was still due: nothing to draw on.
            return
        frame = self.monitor.frame
        lines = header_lines(frame, self.speed, self.monitor.interval_s)
        status = []
        if self.paused:
            status.append("PAUSED")
        if self.behind:
            status.append("behind: simulating as fast as it can")
        status.append(f"sort: {self.sort_label()}")
        header = Text("\n".join(lines))
        header.append("\n" + "  ".join(status), style="bold")
        self.query_one("#header", Static).update(header)

        message = Text(self.message, style="bold red" if self.is_error() else "cyan")
        self.query_one("#message", Static).update(message)

        domains = frame.sorted_domains(self.sort_key())
        table = Table(show_edge=False, box=None, header_style="bold reverse", pad_edge=False)
        for i, col in enumerate(screen_columns(frame)):
            last = i == len(screen_columns(frame)) - 1
            table.add_column(col, justify="left" if i < 2 or last else "right", no_wrap=True)
        for d in domains:
            table.add_row(*screen_cells(frame, d))
        self.query_one("#domains", Static).update(table)

        vcpus = Table(show_edge=False, box=None, header_style="bold reverse", pad_edge=False)
        for i, col in enumerate(VCPU_COLUMNS):
            vcpus.add_column(col, justify="left" if i in (0, 1, 5) else "right", no_wrap=True)
        for d in domains:
            for v in d.vcpus:
                cells = vcpu_cells(d, v)
                state = Text(cells[1], style=STATE_STYLES.get(v.state, ""))
                vcpus.add_row(cells[0], state, *cells[2:5], _bar_text(cells[5]))
        self.query_one("#vcpus", Static).update(vcpus)

    def is_error(self) -> bool:
        return self.message.startswith("error: ")

    def _say(self, message: str) -> None:
        self.message = message
        self._redraw()

    def _error(self, message: str) -> None:
        self._say(f"error: {message}")

    def sort_key(self) -> str:
        keys = sort_keys(self.monitor.frame)
        return keys[self.sort_index % len(keys)][0]

    def sort_label(self) -> str:
        keys = sort_keys(self.monitor.frame)
        return keys[self.sort_index % len(keys)][1]

    # ------------------------------------------------------------ keys

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        if not self.paused:
            self._set_pace()
        self._say("paused" if self.paused else "running")

    def _change_speed(self, faster: bool) -> None:
        if faster:
            self.speed = next((s for s in SPEEDS if s > self.speed), SPEEDS[-1])
        else:
            self.speed = next((s for s in reversed(SPEEDS) if s < self.speed), SPEEDS[0])
        self._set_pace()
        self._say(f"speed {speed_label(self.speed)}")

    def action_faster(self) -> None:
        self._change_speed(faster=True)

    def action_slower(self) -> None:
        self._change_speed(faster=False)

    def action_step(self) -> None:
        if not self.paused:
            self._error("n steps one sample while paused; press space to pause first")
            return
        try:
            self.monitor.advance(self.monitor.next_sample_ns)
        except InternalError as exc:
            self._fail(exc)
            return
        self._set_pace()
        self._say(f"stepped to {self.monitor.frame.time_s:.3f} s")

    def action_sort(self) -> None:
        self.sort_index = (self.sort_index + 1) % len(sort_keys(self.monitor.frame))
        self._say(f"sorted by {self.sort_label()}")

    def action_weight(self) -> None:
        self._open_prompt("weight")

    def action_adjust(self) -> None:
        self._open_prompt("adjust")

    def action_cancel(self) -> None:
        if self.prompt is not None:
            self._close_prompt()
            self._say("cancelled")

    # ------------------------------------------------------------ the prompt

    def _open_prompt(self, what: str) -> None:
        self.prompt = (what, None)
        names = self.monitor.names
        box = self.query_one("#prompt", Input)
        box.suggester = SuggestFromList(names, case_sensitive=True)
        box.border_title = f"{what}: which domain? ({', '.join(names)}; Esc cancels)"
        box.value = ""
        box.display = True
        box.focus()

    def _close_prompt(self) -> None:
        self.prompt = None
        box = self.query_one("#prompt", Input)
        box.value = ""
        box.display = False

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if self.prompt is None:
            return
        what, domain = self.prompt
        text = event.value.strip()
        box = self.query_one("#prompt", Input)
        if domain is None:
            if text not in self.monitor.names:
                self._close_prompt()
                self._error(str(unknown_name("domain", text, self.monitor.names)))
                return
            self.prompt = (what, text)
            box.suggester = None
            box.value = ""
            sched = self.monitor.frame.domains[self.monitor.names.index(text)].sched
            now = ", ".join(f"{k}={v}" for k, v in sched.items()) or "no parameters"
            if what == "weight":
                box.border_title = f"new weight for {text} (now {now})"
            else:
                box.border_title = (
                    f"changes for {text}, as xl would make them: key=value ... "
                    f"e.g. cap=50, pause=true (now {now})"
                )
            return
        self._close_prompt()
        try:
            changes = self._changes(what, text)
            self.monitor.adjust(domain, changes)
        except ScenarioError as exc:
            self._error(str(exc))
            return
        except InternalError as exc:
            self._fail(exc)
            return
        done = " ".join(f"{k}={v}" for k, v in changes.items())
        self._say(f"{domain}: {done} from {self.monitor.now_ns / 1e9:.3f} s")

    @staticmethod
    def _changes(what: str, text: str) -> dict:
        if what == "adjust":
            return parse_changes(text)
        try:
            return {"weight": int(text)}
        except ValueError:
            raise ScenarioError(
                f'"{text}" is not a weight; expected a whole number, e.g. 512', path="weight"
            ) from None


def _bar_text(bar: str) -> Text:
    """The bar with the current utilisation green and the average marked."""
    text = Text()
    for ch in bar:
        text.append(ch, style={"#": "green", "|": "bold yellow"}.get(ch, "dim"))
    return text
