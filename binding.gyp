{
  "targets": [
    {
      "target_name": "thread_cpu",
      "sources": ["native/thread_cpu.c"]
    }
  ]
}
