"""Background jobs run on threads of the server process (never a fork beside the JVM)."""

from __future__ import annotations

import os
import threading

from dashboard import jobs
from dashboard.config import CacheSettings


def test_a_job_runs_in_this_process_and_its_result_lands_in_the_cache(tmp_path):
    manager = jobs.manager(CacheSettings(background_dir=str(tmp_path)))
    release, seen = threading.Event(), {}

    def job_fn(key, progress_key, args, context):
        seen["pid"] = os.getpid()
        manager.handle.set(progress_key, ["halfway"])
        release.wait(10)
        manager.handle.set(key, args[0] * 2)

    job = manager.call_job_fn("k1", job_fn, (21,), {})
    assert manager.job_running(job)
    release.set()
    manager._threads[job].join(10)
    assert seen["pid"] == os.getpid()
    assert not manager.job_running(job)
    assert manager.get_progress("k1") == ["halfway"]
    assert manager.result_ready("k1") and manager.get_result("k1", job) == 42


def test_ids_from_another_process_count_as_finished(tmp_path):
    manager = jobs.manager(CacheSettings(background_dir=str(tmp_path)))
    assert not manager.job_running("987654")
    assert not manager.job_running(None)
    manager.terminate_job("987654")  # nothing to stop, nothing raised
    assert manager.terminate_unhealthy_job("987654") is False


def test_cancel_flag_reaches_the_watch(tmp_path):
    settings = CacheSettings(background_dir=str(tmp_path))
    watch = jobs.CancelWatch(settings, "tok-1")
    watch.poll()
    assert not watch.event.is_set()
    jobs.request_cancel(settings, "tok-2")  # another run's flag
    watch.poll()
    assert not watch.event.is_set()
    jobs.request_cancel(settings, "tok-1")
    watch.poll()
    assert watch.event.is_set()
