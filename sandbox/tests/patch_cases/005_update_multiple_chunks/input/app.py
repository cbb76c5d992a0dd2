def greet(name):
    print('hello', name)


def main():
    greet('world')
    return 0
