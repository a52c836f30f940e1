"""The pure rules the features apply: the memory lifecycle (`lifecycle/`) and sensor readings
(`perceptual`). Values in, decisions or plans out; nothing here touches the store."""
