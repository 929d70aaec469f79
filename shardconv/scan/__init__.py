"""The scan floor: every dump is read through here, once, by the native core; check, trace and
outputs see its sites and distinct values, never the bytes."""
