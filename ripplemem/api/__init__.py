"""The facade's parts: the mixins RippleMem is built from (one per feature), async twins, bulk import."""
