"""The process: interrupts, helper processes that die with their parent, isolation from the
workspace, files written whole."""
