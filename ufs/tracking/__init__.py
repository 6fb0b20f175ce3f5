"""MLflow logging: one run per (output directory, data, data set, method,
setting, h); the design notes are :mod:`.runs`'s. By job:

* :mod:`.client` — tracking URIs, the client, errors, retries on a locked SQLite store;
* :mod:`.identity` — the identity of an output directory and its data, setting and run keys;
* :mod:`.names` — what the UI shows: run names and descriptions, the runs-table view;
* :mod:`.store` — the store's health and atomic creation, :func:`init_experiment`;
* :mod:`.runs` — :func:`log_evaluations`: the runs, their parents, idempotent passes.

Imports ``ufs.pipeline.io`` only (below it); the public names are re-exported here.
"""

from .client import (  # first: MLflow's HTTP environment defaults
    EXPERIMENT_KIND,
    LOCKED_RETRIES,
    STORE_TAG,
    TrackingError,
    default_artifact_root,
    default_tracking_uri,
    resolve_uri,
)
from .identity import IDENTITY_FILE, data_sha256, output_id, output_identity, run_key, setting_key
from .names import (
    SHARED_VIEW,
    run_description,
    run_name,
    runs_table_hint,
    runs_table_path,
    setting_label,
)
from .runs import PARENT_TAG, data_profile, label_tuned_picks, log_evaluations, logged_pid
from .store import experiment_description, init_experiment, planned_store_id, store_problem

__all__ = [
    "EXPERIMENT_KIND",
    "IDENTITY_FILE",
    "LOCKED_RETRIES",
    "PARENT_TAG",
    "SHARED_VIEW",
    "STORE_TAG",
    "TrackingError",
    "data_profile",
    "data_sha256",
    "default_artifact_root",
    "default_tracking_uri",
    "experiment_description",
    "init_experiment",
    "label_tuned_picks",
    "log_evaluations",
    "logged_pid",
    "output_id",
    "output_identity",
    "planned_store_id",
    "resolve_uri",
    "run_description",
    "run_key",
    "run_name",
    "runs_table_hint",
    "runs_table_path",
    "setting_key",
    "setting_label",
    "store_problem",
]
