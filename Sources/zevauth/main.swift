print("zevauth")
