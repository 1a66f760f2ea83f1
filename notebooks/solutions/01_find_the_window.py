# Only between the checkpoint commit and the receipt commit: done=1 is saved, the receipt is not.
window = {"checkpoint"}

lesson1.find_the_window.check(window)
