/* empty.c — stands in for a stage folder that has no sources yet. */
typedef int hloc_empty_translation_unit;
