"""Agent Skills: SKILL.md bundles whose names and descriptions are listed in the instructions, and whose
instructions and files the model reads with ``load_skill`` when a task calls for one.

- :func:`discover_skills` searches the configured roots (:class:`SkillsSettings`, the ``skills`` section) and
  returns a :class:`SkillCatalog`: the skills offered and every problem found, as diagnostics, never raised.
- :func:`skills_section` is the "# Skills" section of the instructions.
- :func:`load_skill_tool` is the ``load_skill`` tool; it reads only inside a skill's directory and runs nothing.
- :func:`parse_skill_file` checks one SKILL.md as the specification's validator does.

A host adds the section to its agent's instructions and the tool to its tools, as ``hive`` does.
"""

from .catalog import MAX_SKILL_FILE_BYTES
from .catalog import SKILL_FILE
from .catalog import Skill
from .catalog import SkillCatalog
from .catalog import SkillDiagnostic
from .catalog import SkillRoot
from .catalog import SkillsSettings
from .catalog import discover_skills
from .frontmatter import ALLOWED_KEYS
from .frontmatter import ParsedSkill
from .frontmatter import SkillMetadata
from .frontmatter import parse_skill_file
from .listing import SKILLS_HEADER
from .listing import skills_section
from .load import LOAD_SKILL
from .load import load_skill_tool
from .load import read_skill

__all__ = [
    "ALLOWED_KEYS",
    "LOAD_SKILL",
    "MAX_SKILL_FILE_BYTES",
    "SKILLS_HEADER",
    "SKILL_FILE",
    "ParsedSkill",
    "Skill",
    "SkillCatalog",
    "SkillDiagnostic",
    "SkillMetadata",
    "SkillRoot",
    "SkillsSettings",
    "discover_skills",
    "load_skill_tool",
    "parse_skill_file",
    "read_skill",
    "skills_section",
]
