"""One workflow: a project file (``attrpriv.yaml``) from assessment to mitigation to releases,
with one budget ledger and one state folder. See docs/project.md.
"""

from __future__ import annotations

from attrpriv.project.runner import Project, ProjectResult, StepStatus, StoredRelease
from attrpriv.project.spec import ProjectSpec, load_project

__all__ = [
    "Project",
    "ProjectResult",
    "ProjectSpec",
    "StepStatus",
    "StoredRelease",
    "load_project",
]
